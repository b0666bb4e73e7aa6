"""HTTP/2 hygiene of the gRPC transport, scripted with raw HTTP/2 (python h2): the settings it
advertises, the flood family (rapid reset, SETTINGS, PING, empty frames, CONTINUATION) ending
the abusive connection with GOAWAY ENHANCE_YOUR_CALM, header list size, idle timeout, graceful
GOAWAY on shutdown; each time a well-behaved neighbour connection keeps working."""

import signal
import socket
import struct
import time

import grpc
import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest

import grpc_stubs

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms"}, "empty": {"type": "synthetic", "fillRate": 0, "latency": "5ms"}},
    "loaders": {"default": {}, "parking": {"source": "empty"}},
}
ENHANCE_YOUR_CALM = 11
BORROW = "/adloader.v1.NativeAdLoader/Borrow"


class RawH2:
    """One raw HTTP/2 client connection."""

    def __init__(self, d):
        self.sock = socket.create_connection((d.host, d.port), timeout=5)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.flush()
        self.events = []
        self.closed = False

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def read_until(self, predicate, timeout=5.0):
        """Reads events until predicate(events) holds or the connection ends."""
        deadline = time.monotonic() + timeout
        while not predicate(self.events) and not self.closed and time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            self.events += self.conn.receive_data(data)
            try:
                self.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.closed = True
        return self.events

    def goaway(self):
        return next((e for e in self.events if isinstance(e, h2.events.ConnectionTerminated)), None)

    def grpc_headers(self, path=BORROW, extra=()):
        return [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
                ("content-type", "application/grpc"), ("te", "trailers"), *extra]

    def close(self):
        self.sock.close()


def grpc_message(payload):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


@pytest.fixture
def setup(daemon):
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--http2-max-resets", "50", "--http2-max-control-frames", "100"])
    channel = grpc.insecure_channel(d.endpoint)
    neighbour = s.grpc.NativeAdLoaderStub(channel)
    assert neighbour.Borrow(s.pb.BorrowRequest(ad_unit_id="n", wait_ms=2000), timeout=10).lease.lease_id > 0
    yield d, s, neighbour
    channel.close()


def neighbour_ok(s, neighbour):
    answer = neighbour.Borrow(s.pb.BorrowRequest(ad_unit_id="n", wait_ms=2000), timeout=10)
    assert answer.outcome in (s.pb.BORROW_OUTCOME_LEASED, s.pb.BORROW_OUTCOME_REUSED)


def expect_calm(d, raw, words):
    raw.read_until(lambda events: any(isinstance(e, h2.events.ConnectionTerminated) for e in events))
    goaway = raw.goaway()
    # The GOAWAY is sent; a client still sending when the server closes may see a reset instead.
    assert (goaway is not None and goaway.error_code == ENHANCE_YOUR_CALM) or raw.closed
    deadline = time.monotonic() + 5
    while words not in d.log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert words in d.log()


def test_settings_advertised(setup):
    d, s, neighbour = setup
    raw = RawH2(d)
    raw.read_until(lambda events: any(isinstance(e, h2.events.RemoteSettingsChanged) for e in events))
    settings = raw.conn.remote_settings
    assert settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] == 100
    assert settings[h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE] == 8192
    raw.close()


def test_rapid_reset_gets_goaway(setup):
    d, s, neighbour = setup
    raw = RawH2(d)
    for i in range(60):
        stream = raw.conn.get_next_available_stream_id()
        raw.conn.send_headers(stream, raw.grpc_headers())
        raw.conn.reset_stream(stream)
    raw.flush()
    expect_calm(d, raw, "stream resets")
    neighbour_ok(s, neighbour)


@pytest.mark.parametrize("kind", ["ping", "settings", "empty-data"])
def test_control_frame_floods_get_goaway(setup, kind):
    d, s, neighbour = setup
    raw = RawH2(d)
    stream = raw.conn.get_next_available_stream_id()
    raw.conn.send_headers(stream, raw.grpc_headers())
    settings_flood = b""
    for i in range(150):
        if kind == "ping":
            raw.conn.ping(struct.pack(">Q", i))
        elif kind == "settings":
            settings_flood += b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty SETTINGS frame
        else:
            raw.conn.send_data(stream, b"")
    # The whole flood in one write, as h2 sends the other kinds: frame by frame, the daemon
    # could answer GOAWAY and close mid-flood, and the next write would meet a reset.
    if settings_flood:
        raw.sock.sendall(settings_flood)
    raw.flush()
    expect_calm(d, raw, "empty frames")
    neighbour_ok(s, neighbour)


def test_continuation_flood_ends_the_connection(setup):
    d, s, neighbour = setup
    raw = RawH2(d)
    raw.read_until(lambda events: any(isinstance(e, h2.events.RemoteSettingsChanged) for e in events))
    # HEADERS without END_HEADERS, then a stream of empty CONTINUATION frames.
    block = raw.conn.encoder.encode(raw.grpc_headers())
    frames = struct.pack(">I", len(block))[1:] + b"\x01\x00" + struct.pack(">I", 1) + block
    frames += (b"\x00\x00\x00\x09\x00" + struct.pack(">I", 1)) * 100
    raw.sock.sendall(frames)
    raw.read_until(lambda events: raw.closed, timeout=5)
    assert raw.closed
    assert "HTTP/2 session ended" in d.log() and "CONTINUATION" in d.log()
    neighbour_ok(s, neighbour)


def test_header_list_over_the_limit_is_resource_exhausted(setup):
    d, s, neighbour = setup
    raw = RawH2(d)
    stream = raw.conn.get_next_available_stream_id()
    raw.conn.send_headers(stream, raw.grpc_headers(extra=[("x-big", "a" * 9000)]), end_stream=False)
    raw.conn.send_data(stream, grpc_message(s.pb.BorrowRequest(ad_unit_id="x").SerializeToString()), end_stream=True)
    raw.flush()
    events = raw.read_until(lambda events: any(isinstance(e, h2.events.StreamEnded) for e in events))
    headers = dict(h for e in events if isinstance(e, (h2.events.ResponseReceived, h2.events.TrailersReceived))
                   for h in e.headers)
    assert headers.get("grpc-status") == str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])
    # The connection stays usable.
    stream = raw.conn.get_next_available_stream_id()
    raw.conn.send_headers(stream, raw.grpc_headers())
    raw.conn.send_data(stream, grpc_message(s.pb.BorrowRequest(ad_unit_id="x", wait_ms=2000).SerializeToString()),
                       end_stream=True)
    raw.flush()
    events = raw.read_until(lambda events: sum(isinstance(e, h2.events.StreamEnded) for e in events) >= 2)
    assert sum(isinstance(e, h2.events.StreamEnded) for e in events) >= 2
    neighbour_ok(s, neighbour)


def test_bad_requests_get_trailers_only_answers(setup):
    d, s, neighbour = setup
    raw = RawH2(d)
    cases = [
        ([("content-type", "text/plain")], "415", None),
        ([("grpc-encoding", "gzip")], "200", grpc.StatusCode.UNIMPLEMENTED),
        ([("grpc-timeout", "soon")], "200", grpc.StatusCode.INVALID_ARGUMENT),
    ]
    for extra, http_status, code in cases:
        stream = raw.conn.get_next_available_stream_id()
        headers = [h for h in raw.grpc_headers() if not (extra[0][0] == "content-type" and h[0] == "content-type")]
        raw.conn.send_headers(stream, headers + extra, end_stream=True)
        raw.flush()
        raw.events = []
        events = raw.read_until(lambda events: any(isinstance(e, h2.events.StreamEnded) for e in events))
        response = next(e for e in events if isinstance(e, h2.events.ResponseReceived))
        fields = dict(response.headers)
        assert fields[":status"] == http_status and "grpc-status" in fields, fields
        if code is not None:
            assert fields["grpc-status"] == str(code.value[0])
        assert not any(isinstance(e, h2.events.DataReceived) for e in events)
    neighbour_ok(s, neighbour)


def test_idle_connection_gets_goaway(daemon):
    d = daemon(config=CONFIG, args=["--idle-timeout", "300ms"])
    raw = RawH2(d)
    raw.read_until(lambda events: any(isinstance(e, h2.events.ConnectionTerminated) for e in events), timeout=5)
    assert raw.goaway() is not None and raw.goaway().error_code == 0
    assert "closing idle connection" in d.log()


def test_shutdown_finishes_in_flight_streams_then_goaway(daemon):
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--shutdown-grace-period", "5s"])
    with grpc.insecure_channel(d.endpoint) as channel:
        stub = s.grpc.NativeAdLoaderStub(channel)
        parked = stub.Borrow.future(s.pb.BorrowRequest(ad_unit_id="p", loader="parking", wait_ms=20000), timeout=30)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pools = stub.Stats(s.pb.StatsRequest(loader="parking"), timeout=10).pools
            if pools and pools[0].parked_borrows == 1:
                break
            time.sleep(0.02)
        d.signal(signal.SIGTERM)
        with pytest.raises(grpc.RpcError) as error:
            parked.result(timeout=10)
        # Answered with a status in trailers, not cut off.
        assert error.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "shutting down" in error.value.details()
    assert d.wait() == 0



def read_frames(sock, done, timeout=5.0):
    """Raw HTTP/2 frames (type, flags, stream, payload) until done(frames) or EOF; h2 cannot be
    used once a GOAWAY arrived (it refuses later frames)."""
    frames, buffer = [], b""
    deadline = time.monotonic() + timeout
    while not done(frames) and time.monotonic() < deadline:
        while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
            length = int.from_bytes(buffer[:3], "big")
            stream = int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
            frames.append((buffer[3], buffer[4], stream, buffer[9:9 + length]))
            buffer = buffer[9 + length:]
        if done(frames):
            break
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            data = b""
        if not data:
            frames.append(("eof", 0, 0, b""))
            break
        buffer += data
    return frames


GOAWAY, PING, HEADERS, END_STREAM, ACK = 7, 6, 1, 0x1, 0x1


def goaways(frames):
    return [f for f in frames if f[0] == GOAWAY]


def start_drain(d, c):
    """SIGTERM, then the raw frames up to the drain's PING (after the GOAWAY notice)."""
    c.read_until(lambda events: any(isinstance(e, h2.events.SettingsAcknowledged) for e in events))
    d.signal(signal.SIGTERM)
    first = read_frames(c.sock, lambda frames: any(f[0] == PING for f in frames))
    assert [f[0] for f in first][-2:] == [GOAWAY, PING], first  # the notice, then the PING
    assert goaways(first)[0][3][:4] == b"\x7f\xff\xff\xff"  # last stream id 2^31-1
    return next(f for f in first if f[0] == PING)


def call_unread(s, c, ad_unit_id):
    """A Borrow written by a client that has not read the GOAWAY (h2 has not seen it): the raw
    frames up to its trailers, and those trailers."""
    import hpack

    stream = c.conn.get_next_available_stream_id()
    c.conn.send_headers(stream, c.grpc_headers())
    c.conn.send_data(stream, grpc_message(s.pb.BorrowRequest(ad_unit_id=ad_unit_id).SerializeToString()),
                     end_stream=True)
    c.sock.sendall(c.conn.data_to_send())
    answered = lambda frames: any(f[0] == HEADERS and f[2] == stream and f[1] & END_STREAM for f in frames)
    frames = read_frames(c.sock, answered)
    assert answered(frames) and frames[-1][0] != "eof", frames
    if not hasattr(c, "decoder"):
        c.decoder = hpack.Decoder()  # one per connection: the server's dynamic table
    blocks = [dict(c.decoder.decode(f[3])) for f in frames if f[0] == HEADERS]
    blocks = [b for f, b in zip([f for f in frames if f[0] == HEADERS], blocks) if f[2] == stream]
    trailers = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                for k, v in blocks[-1].items()}
    return stream, frames, trailers


def test_drain_serves_a_stream_sent_before_its_goaway_was_read(daemon):
    """What a proxy that reuses connections (nginx) does: it writes a call on a connection just as
    the daemon starts draining. The daemon sends GOAWAY and a PING and serves calls as usual
    until the PING is acknowledged: that call is answered OK (a lease), not refused or cut."""
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--shutdown-grace-period", "5s"])
    c = RawH2(d)
    ping = start_drain(d, c)
    stream, later, trailers = call_unread(s, c, "late")
    # Served, not refused; no final GOAWAY while the PING is unacknowledged.
    assert trailers["grpc-status"] == "0", trailers
    assert any(f[0] == 0 and f[2] == stream and len(f[3]) > 5 for f in later), later  # the answer's DATA
    assert not goaways(later), later
    # The acknowledgement: then the final GOAWAY, naming the answered stream, and the close.
    c.sock.sendall(len(ping[3]).to_bytes(3, "big") + bytes([PING, ACK]) + b"\x00\x00\x00\x00" + ping[3])
    last = read_frames(c.sock, lambda frames: frames and frames[-1][0] == "eof")
    final = goaways(last)
    assert final and int.from_bytes(final[-1][3][:4], "big") == stream and final[-1][3][4:8] == b"\x00" * 4, last
    c.close()
    assert d.wait() == 0
    assert "shutdown announce limit ended" not in d.log()  # the acknowledgement ended the wait


def test_drain_does_not_wait_for_a_client_that_never_acknowledges(daemon):
    """A client that never acknowledges the drain's PING: its calls are served until the announce
    limit (1 s) ends, then the service drains anyway (later calls UNAVAILABLE, unprocessed), and
    the daemon exits when the grace period ends."""
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--shutdown-grace-period", "4s"])
    c = RawH2(d)
    started = time.monotonic()
    start_drain(d, c)
    _, _, trailers = call_unread(s, c, "before-the-limit")
    assert trailers["grpc-status"] == "0", trailers
    deadline = time.monotonic() + 5
    while "shutdown announced; draining" not in d.log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "shutdown announce limit ended" in d.log() and "shutdown announced; draining" in d.log()
    assert time.monotonic() - started < 3.5  # the announce limit, not the grace period
    _, later, trailers = call_unread(s, c, "after-the-limit")
    assert trailers["grpc-status"] == "14" and "shutting down" in trailers["grpc-message"], trailers
    assert not goaways(later), later
    last = read_frames(c.sock, lambda frames: frames and frames[-1][0] == "eof", timeout=10)
    assert last[-1][0] == "eof", last
    c.close()
    assert d.wait() == 0
    assert "shutdown grace period ended" in d.log()
