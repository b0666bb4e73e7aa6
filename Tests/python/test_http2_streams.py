"""Streams over SETTINGS_MAX_CONCURRENT_STREAMS (issue 28): a client that opens more streams than
the server advertised loses only those streams (RST_STREAM REFUSED_STREAM, which tells it the
requests were not processed and may be retried, RFC 9113 8.7), not the connection: the calls
already open on it complete and the connection takes new calls afterwards. Raw HTTP/2 (python
h2) because stock gRPC clients keep to the limit."""

import h2.events
import h2.settings

import grpc_stubs
from test_http2_hygiene import BORROW, RawH2, grpc_message

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms"}, "empty": {"type": "synthetic", "fillRate": 0, "latency": "5ms"}},
    "loaders": {"default": {}, "parking": {"source": "empty"}},
}
LIMIT = 8
REFUSED_STREAM = 7


def open_call(raw, request):
    stream = raw.conn.get_next_available_stream_id()
    raw.conn.send_headers(stream, raw.grpc_headers())
    raw.conn.send_data(stream, grpc_message(request.SerializeToString()), end_stream=True)
    return stream


def ended(events, stream):
    return any(isinstance(e, h2.events.StreamEnded) and e.stream_id == stream for e in events)


def grpc_status(events, stream):
    for e in events:
        if isinstance(e, h2.events.TrailersReceived) and e.stream_id == stream:
            return dict(e.headers).get("grpc-status")
        if isinstance(e, h2.events.ResponseReceived) and e.stream_id == stream and "grpc-status" in dict(e.headers):
            return dict(e.headers)["grpc-status"]  # trailers-only
    return None


def test_streams_over_the_limit_are_refused_and_the_others_complete(daemon):
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--http2-max-concurrent-streams", str(LIMIT)])
    raw = RawH2(d)
    raw.read_until(lambda events: any(isinstance(e, h2.events.RemoteSettingsChanged) for e in events))
    assert raw.conn.remote_settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] == LIMIT
    # Our SETTINGS ACK went out with the read; a PING answered proves the server read it, so
    # the streams below are over a limit both sides agreed on (before the ACK nghttp2 refused
    # them by itself).
    raw.conn.ping(b"acked-it")
    raw.flush()
    raw.read_until(lambda events: any(isinstance(e, h2.events.PingAckReceived) for e in events))
    # h2 keeps to the server's limit itself: lift its guard to behave like a client that does not.
    raw.conn.remote_settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 1000
    raw.conn.remote_settings.acknowledge()

    parked = [open_call(raw, s.pb.BorrowRequest(ad_unit_id="p", loader="parking", wait_ms=1500)) for _ in range(LIMIT)]
    over = [open_call(raw, s.pb.BorrowRequest(ad_unit_id="n", wait_ms=1000)) for _ in range(3)]
    raw.flush()

    raw.read_until(lambda events: sum(isinstance(e, h2.events.StreamReset) for e in events) >= len(over))
    resets = {e.stream_id: e.error_code for e in raw.events if isinstance(e, h2.events.StreamReset)}
    assert resets == {stream: REFUSED_STREAM for stream in over}
    assert raw.goaway() is None and not raw.closed

    # The calls open when the others were refused complete on the same connection: each parked
    # Borrow ends with its own gRPC status after its wait (the empty pool has no ad for it).
    raw.read_until(lambda events: all(ended(events, stream) for stream in parked), timeout=10)
    assert raw.goaway() is None and not raw.closed
    for stream in parked:
        assert ended(raw.events, stream), stream
        assert grpc_status(raw.events, stream) is not None, stream
        assert stream not in resets

    # And the connection takes new calls: a retried Borrow is served.
    retry = open_call(raw, s.pb.BorrowRequest(ad_unit_id="n", wait_ms=2000))
    raw.flush()
    raw.read_until(lambda events: ended(events, retry), timeout=10)
    assert grpc_status(raw.events, retry) == "0"
    answer = b"".join(e.data for e in raw.events if isinstance(e, h2.events.DataReceived) and e.stream_id == retry)
    reply = s.pb.BorrowResponse.FromString(answer[5:])
    assert reply.lease.lease_id > 0
    assert raw.goaway() is None
    raw.close()
    assert "refusing those over it" in d.log()


def test_a_client_that_keeps_opening_streams_over_the_limit_gets_goaway(daemon):
    """Refusals count with the client's own resets: past the reset budget, ENHANCE_YOUR_CALM."""
    s = grpc_stubs.load()
    d = daemon(config=CONFIG, args=["--http2-max-concurrent-streams", "2", "--http2-max-resets", "20"])
    raw = RawH2(d)
    raw.read_until(lambda events: any(isinstance(e, h2.events.RemoteSettingsChanged) for e in events))
    raw.conn.ping(b"acked-it")
    raw.flush()
    raw.read_until(lambda events: any(isinstance(e, h2.events.PingAckReceived) for e in events))
    raw.conn.remote_settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 1000
    raw.conn.remote_settings.acknowledge()
    for _ in range(2 + 25):
        open_call(raw, s.pb.BorrowRequest(ad_unit_id="p", loader="parking", wait_ms=5000))
    raw.flush()
    raw.read_until(lambda events: any(isinstance(e, h2.events.ConnectionTerminated) for e in events))
    goaway = raw.goaway()
    assert (goaway is not None and goaway.error_code == 11) or raw.closed
    raw.close()
