/// The consistent-hash ring of nginx's `hash KEY consistent` upstream balancing (ketama, as in
/// `ngx_http_upstream_hash_module.c`), so that a client choosing among several daemons picks
/// the server nginx would pick for the same key and the same `server` lines.
///
/// How nginx builds it, and so how this does:
/// - each server is named by its text as written on its `server` line (`127.0.0.1:7411`). The
///   name splits at its last `:` when only digits follow it (host, port); else it is all host
///   (a `unix:` prefix is dropped, no port);
/// - a server of weight *w* gets 160 × *w* points: `base` = CRC-32 over host, one NUL byte and
///   port; point *j* = CRC-32 continued from `base` over the previous point's hash as 4
///   little-endian bytes (0 for the first), finalised;
/// - the points are sorted by hash; of equal hashes only the first is kept (nginx sorts with
///   glibc's `qsort`, a stable merge sort there: the first in configuration order wins);
/// - a key's hash is the CRC-32 (IEEE, as zlib's) of its bytes; its server is that of the first
///   point whose hash is >= it, wrapping to the first point;
/// - when that server is down, nginx walks on point by point to the next live server: the
///   order ``candidates(for:)`` lists.
///
/// An **empty key** is not hashed by nginx: such requests are balanced round robin. This type
/// gives no server for it (``server(for:)`` is nil) and ``candidates(for:)`` lists the servers in
/// configuration order; a caller should send a non-empty key.
public struct ConsistentHashRing: Sendable, Hashable {
    /// nginx's points per unit of weight.
    public static let pointsPerWeight = 160

    /// The servers' names, in configuration order, as given.
    public let servers: [String]
    /// Sorted by hash, equal hashes removed; `server` indexes ``servers``.
    let points: [Point]

    struct Point: Hashable, Sendable {
        var hash: UInt32
        var server: Int
    }

    /// Builds the ring.
    /// - Parameters:
    ///   - servers: names exactly as on nginx's `server` lines (`host:port`), in that order.
    ///   - weights: nginx's `weight=` per server (default 1 each); entries missing count 1.
    public init(servers: [String], weights: [Int] = []) {
        self.servers = servers
        var points: [(point: Point, order: Int)] = []
        for (index, name) in servers.enumerated() {
            let weight = index < weights.count ? max(1, weights[index]) : 1
            let (host, port) = Self.split(name)
            var base = CRC32()
            base.update(host)
            base.update([0])
            base.update(port)
            var previous: UInt32 = 0
            for _ in 0..<(weight * Self.pointsPerWeight) {
                var crc = base
                crc.update([
                    UInt8(truncatingIfNeeded: previous), UInt8(truncatingIfNeeded: previous >> 8),
                    UInt8(truncatingIfNeeded: previous >> 16), UInt8(truncatingIfNeeded: previous >> 24),
                ])
                let hash = crc.final
                points.append((Point(hash: hash, server: index), points.count))
                previous = hash
            }
        }
        points.sort { $0.point.hash != $1.point.hash ? $0.point.hash < $1.point.hash : $0.order < $1.order }
        var unique: [Point] = []
        unique.reserveCapacity(points.count)
        for (point, _) in points where unique.last?.hash != point.hash { unique.append(point) }
        self.points = unique
    }

    /// The index in ``servers`` of the server that owns `key`; nil for an empty key or no servers.
    public func server(for key: String) -> Int? {
        guard !key.isEmpty, !points.isEmpty else { return nil }
        return points[firstPoint(atOrAbove: CRC32.checksum(Array(key.utf8))) % points.count].server
    }

    /// Every server, in the order nginx tries them for `key`: the owner first, then the
    /// servers met walking on along the ring (each once). For an empty key, configuration order.
    public func candidates(for key: String) -> [Int] {
        guard !key.isEmpty, !points.isEmpty else { return Array(servers.indices) }
        let start = firstPoint(atOrAbove: CRC32.checksum(Array(key.utf8)))
        var seen = Set<Int>()
        var order: [Int] = []
        for step in 0..<points.count where seen.count < servers.count {
            let server = points[(start + step) % points.count].server
            if seen.insert(server).inserted { order.append(server) }
        }
        return order
    }

    /// nginx's binary search: the index of the first point with a hash >= `hash` (may be
    /// `points.count`, which wraps to 0).
    private func firstPoint(atOrAbove hash: UInt32) -> Int {
        var low = 0
        var high = points.count
        while low < high {
            let middle = (low + high) / 2
            if hash > points[middle].hash {
                low = middle + 1
            } else if hash < points[middle].hash {
                high = middle
            } else {
                return middle
            }
        }
        return low
    }

    /// Host and port bytes of a server name, as nginx splits it.
    static func split(_ name: String) -> (host: [UInt8], port: [UInt8]) {
        let bytes = Array(name.utf8)
        if bytes.count >= 5, String(decoding: bytes[0..<5], as: UTF8.self).lowercased() == "unix:" {
            return (Array(bytes[5...]), [])
        }
        var index = bytes.count - 1
        while index >= 0 {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") { return (Array(bytes[..<index]), Array(bytes[(index + 1)...])) }
            if byte < UInt8(ascii: "0") || byte > UInt8(ascii: "9") { break }
            index -= 1
        }
        return (bytes, [])
    }
}
