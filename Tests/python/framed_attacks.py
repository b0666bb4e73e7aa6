"""The framed protocol, written from Proto/PROTOCOL.md (sections 2-4): a small blocking client for
the neighbour, and the abuse rounds neighbour.Attacker runs (huge length prefixes, slowloris,
floods of calls whose answers are never read)."""

import socket
import struct
import time

PREFACE = b"ADLOADER/1\r\n"
BORROW = "/adloader.v1.NativeAdLoader/Borrow"
STATS = "/adloader.v1.NativeAdLoader/Stats"


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(number, value):
    """A protobuf field: int -> varint, bytes/str -> length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    value = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(value)) + value


def request_frame(call_id, method, message):
    body = field(1, call_id) + field(2, method) + field(5, message)
    return b"\x00" + struct.pack(">I", len(body)) + body


def borrow_request(ad_unit_id, slot_key="", wait_ms=0):
    return field(1, ad_unit_id) + (field(3, slot_key) if slot_key else b"") + (field(4, wait_ms) if wait_ms else b"")


def parse_fields(data):
    fields, i = {}, 0
    while i < len(data):
        key, i = _varint_at(data, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, i = _varint_at(data, i)
        elif kind == 2:
            length, i = _varint_at(data, i)
            value, i = data[i:i + length], i + length
        else:
            raise ValueError(f"wire type {kind}")
        fields[number] = value
    return fields


def _varint_at(data, i):
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7


class FramedClient:
    """One framed connection; `call` is one unary call, answered in order (one call at a time)."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(PREFACE)
        self.buffer = b""
        assert self._read(len(PREFACE)) == PREFACE
        self.next_id = 1

    def _read(self, n):
        while len(self.buffer) < n:
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("closed by the daemon")
            self.buffer += data
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def read_frame(self):
        """(call_id, message, end, status, status_message) of the next response frame."""
        head = self._read(5)
        fields = parse_fields(self._read(struct.unpack(">I", head[1:])[0]))
        return (fields.get(1, 0), fields.get(2, b""), bool(fields.get(3, 0)), fields.get(4, 0),
                fields.get(5, b"").decode(errors="replace"))

    def call(self, method, message):
        call_id = self.next_id
        self.next_id += 1
        self.sock.sendall(request_frame(call_id, method, message))
        while True:
            frame = self.read_frame()
            if frame[0] == call_id and frame[2]:
                return frame

    def close(self):
        self.sock.close()


def round_huge_length(host, port, length=0xFFFFFFFF):
    """A length prefix far over limits.maxMessageSize: RESOURCE_EXHAUSTED on call 0, then close."""
    sock = socket.create_connection((host, port), timeout=5)
    try:
        sock.sendall(PREFACE + b"\x00" + struct.pack(">I", length))
        while sock.recv(1 << 16):
            pass
    finally:
        sock.close()


def round_just_under_the_limit(host, port, connections=50, length=4 * 1024 * 1024 - 1, hold=0.3):
    """Connections each announcing a message just under the 4 MiB limit and sending nothing more:
    the daemon must not reserve the announced size per connection."""
    socks = []
    try:
        for _ in range(connections):
            sock = socket.create_connection((host, port), timeout=5)
            sock.sendall(PREFACE + b"\x00" + struct.pack(">I", length) + b"\x0a")
            socks.append(sock)
        time.sleep(hold)
    finally:
        for sock in socks:
            sock.close()


def round_slowloris(host, port, connections=100, duration=0.5, step=0.05):
    """Many connections, each dribbling one byte of a frame at a time."""
    frame = request_frame(1, BORROW, borrow_request("slow"))
    socks = []
    try:
        for _ in range(connections):
            sock = socket.create_connection((host, port), timeout=5)
            sock.sendall(PREFACE)
            socks.append(sock)
        started, sent = time.monotonic(), 0
        while time.monotonic() - started < duration and sent < len(frame):
            for sock in socks:
                sock.sendall(frame[sent:sent + 1])
            sent += 1
            time.sleep(step)
    finally:
        for sock in socks:
            sock.close()


_flood = {}


def round_flood_without_reading(host, port, calls=20000, method=STATS):
    """Calls sent as fast as the daemon takes them, no answer ever read, for about a second."""
    if calls not in _flood:
        _flood[calls] = PREFACE + b"".join(request_frame(i + 1, method, b"") for i in range(calls))
    sock = socket.create_connection((host, port), timeout=1)
    try:
        sock.sendall(_flood[calls])
    except (socket.timeout, BrokenPipeError, ConnectionResetError):
        pass  # paused by the daemon (it stopped reading), or closed
    finally:
        sock.close()


VARIANTS = [("round_huge_length", ()), ("round_just_under_the_limit", ()), ("round_slowloris", ()),
            ("round_flood_without_reading", ())]
_next = [0]


def round_family(host, port):
    """The next variant: one neighbour measurement covers them all."""
    function, args = VARIANTS[_next[0] % len(VARIANTS)]
    _next[0] += 1
    globals()[function](host, port, *args)
