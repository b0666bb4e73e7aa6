"""A local OpenRTB exchange for the tests: answers POST /openrtb2/auction on loopback with bids
built from the real payloads in Tests/AdLoaderOpenRTBTests/fixtures, records every request,
counts notices (GET /notice/...), and injects faults on demand.

``Exchange(fixture="improvedigital/native.json")`` starts it on a free port; a native imp is
answered with the fixture's bid, a banner or video imp (interstitial, rewarded, app-open) with
BANNER_HTML or VAST_XML (``prefer`` picks for multi-format imps, ``send_mtype`` off leaves
``mtype`` out, ``bid_kinds`` lists what was sent); ``url`` is the
auction endpoint; ``faults`` is a list consumed one per auction request (then ``mode`` applies):
"ok", "204", "400", "429", "500", "slow-headers", "slow-body", "hang", "malformed",
"html", "empty-object", "nbr", "missing-asset", "503" (with ``Retry-After: 5``), "bad-bids" (one bid
a strict reader drops per imp, each for another reason: BAD_BID_KINDS, with a ``lurl``). ``exp``
(seconds, default None: not sent) is the ``exp`` every bid carries. ``stop()`` closes it (connection refused after);
``start()`` again on the same port brings it back. ``notice_faults`` is a list of HTTP statuses
consumed one per notice GET (then 200); ``delivered`` lists the notice paths answered 200.
"""

import gzip
import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Tests", "AdLoaderOpenRTBTests", "fixtures")

# adloaderd's standard Native 1.2 layout (NativeAssetLayout.standard): kind -> asset id.
OUR_IDS = {"title": 1, "img1": 2, "img3": 3, "data2": 4, "data12": 5, "data1": 6, "data3": 7, "data6": 8}


# A full-screen banner creative (what a display bidder's adm looks like) and a VAST 4.0 inline
# linear video (an app's VAST player reads it); both reach the client byte for byte.
BANNER_HTML = ('<!DOCTYPE html><html><body style="margin:0"><a href="https://stub-advertiser.example/landing">'
               '<img src="https://cdn.stub-advertiser.example/i/320x480.jpg" width="320" height="480" alt="Ad">'
               '</a><img src="https://stub-advertiser.example/px?e=imp" width="1" height="1" alt=""></body></html>')
VAST_XML = ('<?xml version="1.0" encoding="UTF-8"?><VAST version="4.0"><Ad id="stub-video-1"><InLine>'
            '<AdSystem>stub</AdSystem><AdTitle>Stub video</AdTitle>'
            '<Impression><![CDATA[https://stub-advertiser.example/px?e=vimp]]></Impression>'
            '<Creatives><Creative><Linear><Duration>00:00:15</Duration><MediaFiles>'
            '<MediaFile delivery="progressive" type="video/mp4" width="1080" height="1920">'
            '<![CDATA[https://cdn.stub-advertiser.example/v/15s.mp4]]></MediaFile>'
            '</MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>')


# What "bad-bids" answers for the imps of a request, in order, and the OpenRTB loss reason code
# (${AUCTION_LOSS}) each must come back with: a lower second bid for the first imp (102, lost to
# a higher bid), a banner mtype for a native imp (204, incorrect creative format), no adm (7,
# missing markup), no price (9, missing bid price), native markup without its assets (3, invalid
# bid response).
BAD_BID_KINDS = [("outbid", 102), ("wrong-mtype", 204), ("no-adm", 7), ("no-price", 9), ("bad-markup", 3)]


def _kind(asset):
    if "title" in asset:
        return "title"
    if "img" in asset:
        return "img%s" % asset["img"].get("type", "")
    if "data" in asset:
        return "data%s" % asset["data"].get("type", "")
    return None


def load_fixture(name):
    """The first bid of a fixture's mocked exchange response, its markup re-numbered to our layout."""
    with open(os.path.join(FIXTURES, name)) as f:
        doc = json.load(f)
    calls = doc.get("httpCalls") or doc.get("httpcalls")
    request = doc["mockBidRequest"]["imp"][0]["native"]["request"]
    layout = json.loads(request) if isinstance(request, str) else request
    assets = layout.get("assets", [])
    numbered = all("id" not in a for a in assets)
    kinds = {(i if numbered else a["id"]): _kind(a) for i, a in enumerate(assets)}
    response = calls[0]["mockResponse"]["body"]
    bid = response["seatbid"][0]["bid"][0]
    adm = json.loads(bid["adm"]) if isinstance(bid["adm"], str) else bid["adm"]
    root = adm.get("native", adm)
    for asset in root.get("assets", []):
        kind = _kind(asset)
        if kind in ("img", "data", None):
            kind = kinds.get(asset.get("id"), kind)
        if kind in OUR_IDS:
            asset["id"] = OUR_IDS[kind]
    return bid, adm, response.get("cur", "USD")


class Exchange:
    def __init__(self, fixture="improvedigital/native.json", port=0):
        self.bid, self.adm, self.currency = load_fixture(fixture)
        self.requests = []          # (headers dict, parsed JSON body)
        self.times = []             # time.monotonic() of each auction request
        self.notices = []           # paths of notice GETs
        self.notice_faults = []     # statuses answered to the next notice GETs (then 200)
        self.delivered = []         # paths of notice GETs answered 200
        self.faults = []
        self.mode = "ok"
        self.delay = 2.0            # slow-headers / slow-body / hang seconds
        self.lock = threading.Lock()
        self.connections = set()    # open keep-alive connections, cut by stop()
        self.counter = 0
        self.templates = {}
        self.exp = None             # each bid's "exp" in seconds; None: the fixture's is dropped
        self.port = port
        self.server = None
        self.strict = True          # validate every BidRequest like a strict exchange (400 + problems)
        self.invalid = []           # (request id, [problems]) of requests refused as invalid
        self.tids = set()
        self.prefer = ["native", "banner", "video"]  # what a multi-format imp is answered with
        self.send_mtype = True      # banner and video bids carry mtype
        self.bid_kinds = []         # the kind of every bid sent, in order
        self.notice_headers = []    # (path, lower-cased headers) of every notice GET
        self.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d/openrtb2/auction" % self.port

    def start(self):
        exchange = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                BaseHTTPRequestHandler.setup(self)
                with exchange.lock:
                    exchange.connections.add(self.connection)

            def finish(self):
                try:
                    BaseHTTPRequestHandler.finish(self)
                finally:
                    with exchange.lock:
                        exchange.connections.discard(self.connection)

            def do_GET(self):
                with exchange.lock:
                    exchange.notices.append(self.path)
                    exchange.notice_headers.append((self.path, dict((k.lower(), v) for k, v in self.headers.items())))
                    status = exchange.notice_faults.pop(0) if exchange.notice_faults else 200
                    if status == 200:
                        exchange.delivered.append(self.path)
                self._send(status, b"", "text/plain")

            def do_POST(self):
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with exchange.lock:
                    exchange.requests.append((dict((k.lower(), v) for k, v in self.headers.items()), body))
                    exchange.times.append(time.monotonic())
                    fault = exchange.faults.pop(0) if exchange.faults else exchange.mode
                exchange.answer(self, fault, body)

            def _send(self, status, payload, content_type, extra=()):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        self.handler_send = Handler._send
        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                # A client that timed out and hung up (the daemon's curl under load, or an
                # outage test) is expected: not worth a traceback.
                pass

        self.server = Server(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.server.allow_reuse_address = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        """Closes the listener and every open connection: the exchange is down."""
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        with self.lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _bid_template(self, missing_asset):
        """One bid as JSON text with %(id)s / %(impid)s holes (built once: the stub must keep up
        with a benchmark's few hundred requests a second)."""
        adm = json.loads(json.dumps(self.adm))
        if missing_asset:
            root = adm.get("native", adm)
            root["assets"] = [a for a in root["assets"] if "title" not in a]
        bid = json.loads(json.dumps(self.bid))
        bid.pop("exp", None)
        if self.exp is not None:
            bid["exp"] = self.exp
        bid.update({
            "id": "@ID@", "impid": "@IMPID@", "adm": json.dumps(adm),
            "nurl": "http://127.0.0.1:%d/notice/win?bid=${AUCTION_BID_ID}&price=${AUCTION_PRICE}" % self.port,
            "burl": "http://127.0.0.1:%d/notice/bill?bid=${AUCTION_BID_ID}&price=${AUCTION_PRICE}&imp=${AUCTION_IMP_ID}" % self.port,
            "lurl": "http://127.0.0.1:%d/notice/loss?bid=${AUCTION_BID_ID}&reason=${AUCTION_LOSS}" % self.port,
        })
        text = json.dumps(bid).replace("%", "%%")
        return text.replace('"@ID@"', '"%(id)s"').replace('"@IMPID@"', '%(impid)s')

    def _markup_template(self, kind):
        """A banner (HTML) or video (VAST 4.0) bid as JSON text with the same holes, its
        ``mtype`` set unless ``send_mtype`` is off."""
        bid = {
            "id": "@ID@", "impid": "@IMPID@", "price": 2.5 if kind == "banner" else 6.0,
            "adm": BANNER_HTML if kind == "banner" else VAST_XML, "crid": "stub-%s-1" % kind,
            "adomain": ["stub-advertiser.example"], "w": 320, "h": 480,
            "nurl": "http://127.0.0.1:%d/notice/win?bid=${AUCTION_BID_ID}&price=${AUCTION_PRICE}" % self.port,
            "burl": "http://127.0.0.1:%d/notice/bill?bid=${AUCTION_BID_ID}&price=${AUCTION_PRICE}&imp=${AUCTION_IMP_ID}" % self.port,
            "lurl": "http://127.0.0.1:%d/notice/loss?bid=${AUCTION_BID_ID}&reason=${AUCTION_LOSS}" % self.port,
        }
        if self.send_mtype:
            bid["mtype"] = 1 if kind == "banner" else 2
        if self.exp is not None:
            bid["exp"] = self.exp
        text = json.dumps(bid).replace("%", "%%")
        return text.replace('"@ID@"', '"%(id)s"').replace('"@IMPID@"', '%(impid)s')

    def kind_for(self, imp):
        """What the stub bids for an impression: the first of ``prefer`` the imp asks for."""
        for kind in self.prefer:
            if kind in imp:
                return kind
        return "native"

    def response_for(self, request, missing_asset=False):
        """The body (bytes) answering `request`: one bid per imp, native ones made from the
        fixture, banner and video ones from BANNER_HTML and VAST_XML."""
        with self.lock:
            self.counter += 1
            n = self.counter
        parts = []
        for imp in request["imp"]:
            kind = self.kind_for(imp)
            key = (kind, "missing" if missing_asset else "ok", self.exp, self.send_mtype)
            template = self.templates.get(key)
            if template is None:
                template = self.templates[key] = (self._bid_template(missing_asset) if kind == "native"
                                                  else self._markup_template(kind))
            with self.lock:
                self.bid_kinds.append(kind)
            parts.append(template % {"id": "bid-%d-%s" % (n, imp["id"]), "impid": json.dumps(imp["id"])})
        bids = ",".join(parts)
        return ('{"id":%s,"cur":%s,"seatbid":[{"seat":"stub","bid":[%s]}]}'
                % (json.dumps(request["id"]), json.dumps(self.currency), bids)).encode()

    def bad_response_for(self, request):
        """The "bad-bids" body: for imp k the k-th of BAD_BID_KINDS (the first imp also gets the
        fixture's bid at a higher price, which is kept). Each bad bid's id is ``bad-<kind>-N``."""
        with self.lock:
            self.counter += 1
            n = self.counter
        lurl = "http://127.0.0.1:%d/notice/loss?bid=${AUCTION_BID_ID}&reason=${AUCTION_LOSS}" % self.port
        bids = []
        for imp, (kind, _) in zip(request["imp"], BAD_BID_KINDS):
            if kind == "outbid":
                good = json.loads(self._good_bid(n, imp["id"]))
                good["price"] = 5.0
                bids.append(good)
            bid = {"id": "bad-%s-%d" % (kind, n), "impid": imp["id"], "price": 1.0, "lurl": lurl, "crid": "bad-1",
                   "adm": json.dumps(self.adm)}
            if kind == "wrong-mtype":
                bid["mtype"] = 1
            elif kind == "no-adm":
                del bid["adm"]
            elif kind == "no-price":
                del bid["price"]
            elif kind == "bad-markup":
                bid["adm"] = json.dumps({"native": {"assets": []}})
            bids.append(bid)
        return json.dumps({"id": request["id"], "cur": self.currency,
                           "seatbid": [{"seat": "stub", "bid": bids}]}).encode()

    def _good_bid(self, n, impid):
        template = self.templates.get(("native", "ok", self.exp, self.send_mtype))
        if template is None:
            template = self.templates[("native", "ok", self.exp, self.send_mtype)] = self._bid_template(False)
        return template % {"id": "good-%d" % n, "impid": json.dumps(impid)}

    def problems(self, request):
        """What a strict OpenRTB 2.6 exchange refuses in `request` (a parsed BidRequest)."""
        found = []
        if not isinstance(request, dict):
            return ["not a JSON object"]
        imps = request.get("imp")
        if not isinstance(imps, list) or not imps:
            found.append("imp: missing or empty")
            imps = []
        ids = set()
        for n, imp in enumerate(imps):
            where = "imp[%d]" % n
            if not isinstance(imp.get("id"), str) or imp["id"] in ids:
                found.append(where + ".id: missing or not unique")
            ids.add(imp.get("id"))
            kinds = [k for k in ("native", "banner", "video", "audio") if k in imp]
            if len(kinds) < 1:
                found.append(where + ": no native, banner, video or audio object")
            if "native" in imp:
                native = imp["native"]
                if not isinstance(native.get("request"), str) or native.get("ver") != "1.2":
                    found.append(where + ".native: request must be a Native 1.2 string, ver \"1.2\"")
            if "banner" in imp and not (isinstance(imp["banner"].get("format"), list)
                                        or ("w" in imp["banner"] and "h" in imp["banner"])):
                found.append(where + ".banner: needs format[] or w and h")
            if "video" in imp:
                video = imp["video"]
                if not isinstance(video.get("mimes"), list) or not video["mimes"]:
                    found.append(where + ".video.mimes: required")
                if not isinstance(video.get("protocols"), list):
                    found.append(where + ".video.protocols: required")
            for flag in ("instl", "rwdd", "secure"):
                if flag in imp and imp[flag] not in (0, 1):
                    found.append("%s.%s: must be 0 or 1" % (where, flag))
            if imp.get("rwdd") == 1 and "video" not in imp:
                found.append(where + ".rwdd: a rewarded impression needs video")
            if imp.get("rwdd") == 1 and imp.get("instl") != 1:
                found.append(where + ".rwdd: a rewarded impression here is full screen (instl 1)")
            if "banner" in imp:
                for size in imp["banner"].get("format") or []:
                    if not (isinstance(size.get("w"), int) and isinstance(size.get("h"), int)
                            and size["w"] > 0 and size["h"] > 0):
                        found.append(where + ".banner.format[]: w and h must be positive integers")
            if "video" in imp:
                video = imp["video"]
                if not all(isinstance(x, int) and 1 <= x <= 12 for x in video.get("protocols") or []):
                    found.append(where + ".video.protocols: OpenRTB codes 1..12")
                for key in ("w", "h", "maxduration", "minduration", "plcmt", "placement", "linearity", "skip", "pos"):
                    if key in video and not (isinstance(video[key], int) and video[key] >= 0):
                        found.append("%s.video.%s: must be a non-negative integer" % (where, key))
                if video.get("skip") not in (None, 0, 1):
                    found.append(where + ".video.skip: must be 0 or 1")
            if "exp" in imp and (not isinstance(imp["exp"], int) or imp["exp"] <= 0):
                found.append(where + ".exp: must be a positive integer")
            if "bidfloor" in imp:
                if not isinstance(imp["bidfloor"], (int, float)) or imp["bidfloor"] < 0:
                    found.append(where + ".bidfloor: must be a non-negative number")
                cur = imp.get("bidfloorcur")
                if not (isinstance(cur, str) and len(cur) == 3 and cur.isupper()):
                    found.append(where + ".bidfloorcur: must be an ISO 4217 code")
        regs = request.get("regs")
        if not isinstance(regs, dict):
            found.append("regs: missing")
            regs = {}
        for flag in ("coppa", "gdpr"):
            if regs.get(flag) not in (0, 1):
                found.append("regs.%s: must be 0 or 1" % flag)
        if "us_privacy" in regs and not (isinstance(regs["us_privacy"], str) and len(regs["us_privacy"]) == 4):
            found.append("regs.us_privacy: must be a 4-character US privacy string")
        if ("gpp" in regs) != ("gpp_sid" in regs):
            found.append("regs.gpp and regs.gpp_sid go together")
        if "gpp_sid" in regs and not all(isinstance(x, int) for x in regs["gpp_sid"]):
            found.append("regs.gpp_sid: must be integers")
        user = request.get("user") or {}
        if "consent" in user and regs.get("gdpr") != 1:
            found.append("user.consent without regs.gdpr 1")
        if regs.get("gdpr") == 1 and not user.get("consent"):
            found.append("regs.gdpr 1 without user.consent")
        device = request.get("device") or {}
        for key in ("id", "buyeruid", "eids", "geo", "yob", "gender"):
            if key in user:
                found.append("user.%s: a pooled request must carry no user identifier" % key)
        for key in ("ifa", "ip", "ipv6", "dpidsha1", "dpidmd5", "didsha1", "didmd5", "macsha1", "macmd5", "geo"):
            if key in device:
                found.append("device.%s: a pooled request must carry no device identifier" % key)
        if device.get("lmt", 0) not in (0, 1):
            found.append("device.lmt: must be 0 or 1")
        source = request.get("source")
        tid = source.get("tid") if isinstance(source, dict) else None
        if not isinstance(tid, str) or not tid:
            found.append("source.tid: required")
        elif tid in self.tids:
            found.append("source.tid: %s seen before" % tid)
        schain = source.get("schain") if isinstance(source, dict) else None
        if schain is not None:
            if schain.get("complete") not in (0, 1) or schain.get("ver") != "1.0":
                found.append("source.schain: complete 0/1 and ver 1.0 required")
            nodes = schain.get("nodes")
            if not isinstance(nodes, list) or not nodes:
                found.append("source.schain.nodes: required")
            for node in nodes or []:
                if not isinstance(node.get("asi"), str) or not isinstance(node.get("sid"), str) or node.get("hp") != 1:
                    found.append("source.schain.nodes[]: asi, sid and hp 1 required")
        return found

    def answer(self, handler, fault, request):
        send = lambda status, payload, ctype="application/json", extra=(): handler._send(status, payload, ctype, extra)
        if self.strict:
            problems = self.problems(request)
            with self.lock:
                if isinstance(request, dict) and isinstance(request.get("source"), dict):
                    self.tids.add(request["source"].get("tid"))
                if problems:
                    self.invalid.append((request.get("id") if isinstance(request, dict) else None, problems))
            if problems:
                send(400, ("Invalid request: " + "; ".join(problems)).encode(), "text/plain")
                return
        if fault == "204":
            handler.send_response(204)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif fault == "400":
            send(400, b"Invalid request: imp[0].native.request.assets must have unique ids", "text/plain")
        elif fault == "429":
            send(429, b"slow down", "text/plain", [("Retry-After", "2")])
        elif fault == "503":
            send(503, b"overloaded", "text/plain", [("Retry-After", "5")])
        elif fault == "500":
            send(500, b"internal error", "text/plain")
        elif fault == "malformed":
            send(200, b'{"id": "x", "seatbid": [ {"bid": [')
        elif fault == "html":
            send(200, b"<html><body>maintenance</body></html>", "text/html")
        elif fault == "empty-object":
            send(200, b"{}")
        elif fault == "nbr":
            send(200, json.dumps({"id": request["id"], "nbr": 2}).encode())
        elif fault == "slow-headers":
            time.sleep(self.delay)
            send(200, self.response_for(request))
        elif fault == "slow-body":
            payload = self.response_for(request)
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload[:10])
            handler.wfile.flush()
            time.sleep(self.delay)
            handler.wfile.write(payload[10:])
        elif fault == "bad-bids":
            send(200, self.bad_response_for(request))
        elif fault == "missing-asset":
            send(200, self.response_for(request, missing_asset=True))
        elif fault == "gzip":
            payload = gzip.compress(self.response_for(request))
            send(200, payload, "application/json", [("Content-Encoding", "gzip")])
        else:
            send(200, self.response_for(request))

    def delivered_of(self, kind):
        with self.lock:
            return [p for p in self.delivered if p.startswith("/notice/" + kind)]

    def notices_of(self, kind):
        with self.lock:
            return [p for p in self.notices if p.startswith("/notice/" + kind)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
