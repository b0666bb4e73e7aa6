"""nginx's ``hash KEY consistent`` ring (ketama, ``ngx_http_upstream_hash_module.c``), the same
as the Swift ``ConsistentHashRing`` in Sources/AdLoaderClient: a client that talks to the
replicas directly picks the one nginx would pick for the same key and ``server`` lines.

- Each server is named by its text as on its ``server`` line (``127.0.0.1:7411``). The name
  splits at its last ``:`` when only digits follow (host, port); else it is all host (a
  ``unix:`` prefix is dropped, no port).
- A server of weight *w* gets 160 × *w* points: ``base`` = CRC-32 over host, one NUL byte and
  port; point *j* = CRC-32 continued from ``base`` over the previous point's hash as 4
  little-endian bytes (0 for the first).
- Points are sorted by hash; of equal hashes only the first in configuration order is kept.
- A key's hash is the CRC-32 (zlib's) of its UTF-8 bytes; its server is that of the first point
  whose hash is >= it, wrapping to the first point; when that server is down nginx walks on
  point by point to the next live server (``candidates``).
- An empty key is not hashed (nginx balances those round robin): ``server`` is None and
  ``candidates`` is the configuration order.

Tests/AdLoaderClientTests/fixtures/ring-vectors.json holds keys and owners that both this ring
and the Swift one are checked against.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from typing import List, Optional, Sequence, Tuple

POINTS_PER_WEIGHT = 160


def split(name: str) -> Tuple[bytes, bytes]:
    """Host and port bytes of a server name, as nginx splits it."""
    data = name.encode("utf-8")
    if len(data) >= 5 and data[:5].lower() == b"unix:":
        return data[5:], b""
    index = len(data) - 1
    while index >= 0:
        byte = data[index]
        if byte == ord(":"):
            return data[:index], data[index + 1:]
        if byte < ord("0") or byte > ord("9"):
            break
        index -= 1
    return data, b""


class ConsistentHashRing:
    """The ring over ``servers`` (names exactly as on nginx's ``server`` lines, in that order)."""

    def __init__(self, servers: Sequence[str], weights: Sequence[int] = ()) -> None:
        self.servers: List[str] = list(servers)
        points: List[Tuple[int, int, int]] = []  # (hash, order, server)
        for index, name in enumerate(self.servers):
            weight = max(1, weights[index]) if index < len(weights) else 1
            host, port = split(name)
            base = zlib.crc32(host + b"\x00" + port)
            previous = 0
            for _ in range(weight * POINTS_PER_WEIGHT):
                point = zlib.crc32(struct.pack("<I", previous), base)
                points.append((point, len(points), index))
                previous = point
        points.sort()
        self._hashes: List[int] = []
        self._owners: List[int] = []
        for point, _, server in points:
            if self._hashes and self._hashes[-1] == point:
                continue
            self._hashes.append(point)
            self._owners.append(server)

    def __len__(self) -> int:
        return len(self._hashes)

    def _first_point(self, key: str) -> int:
        return bisect.bisect_left(self._hashes, zlib.crc32(key.encode("utf-8")))

    def server(self, key: str) -> Optional[int]:
        """The index in ``servers`` of the server that owns ``key``; None for an empty key or no servers."""
        if not key or not self._hashes:
            return None
        return self._owners[self._first_point(key) % len(self._hashes)]

    def candidates(self, key: str) -> List[int]:
        """Every server, in the order nginx tries them for ``key``: the owner first, then the
        servers met walking on along the ring. For an empty key, configuration order."""
        if not key or not self._hashes:
            return list(range(len(self.servers)))
        start = self._first_point(key)
        order: List[int] = []
        seen = set()
        count = len(self._hashes)
        for step in range(count):
            if len(seen) == len(self.servers):
                break
            server = self._owners[(start + step) % count]
            if server not in seen:
                seen.add(server)
                order.append(server)
        return order
