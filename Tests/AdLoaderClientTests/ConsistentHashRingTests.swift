import Foundation
import Testing

@testable import AdLoaderClient

@Suite struct ConsistentHashRingTests {
    static let servers = ["127.0.0.1:17421", "127.0.0.1:17422", "127.0.0.1:17423"]

    @Test func crc32IsZlibs() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        var split = CRC32()
        split.update(Array("12345".utf8))
        split.update(Array("6789".utf8))
        #expect(split.final == 0xCBF4_3926)
    }

    /// What nginx 1.22.1 (Debian's) answered for these keys with `hash
    /// $http_x_adloader_affinity consistent` over these three `server` lines, read from each
    /// answer's x-adloader-instance header (Tests/python/test_cluster.py checks it live).
    @Test func matchesWhatNginxRoutedForTheseKeys() {
        let ring = ConsistentHashRing(servers: Self.servers)
        let nginx = [2, 1, 3, 1, 3, 1, 3, 2, 3, 1, 3, 1, 1, 3, 1, 1, 1, 2, 1, 1]
        for (index, expected) in nginx.enumerated() {
            #expect(ring.server(for: "feed-\(index + 1)") == expected - 1, "feed-\(index + 1)")
        }
    }

    @Test func pointsAre160PerWeightSortedAndUnique() {
        let ring = ConsistentHashRing(servers: Self.servers)
        #expect(ring.points.count == 480)
        #expect(zip(ring.points, ring.points.dropFirst()).allSatisfy { $0.hash < $1.hash })
        let weighted = ConsistentHashRing(servers: Self.servers, weights: [2])
        #expect(weighted.points.count == 640)
        #expect(weighted.points.filter { $0.server == 0 }.count == 320)
        // A server's points depend only on its own name: the same with others around.
        let alone = ConsistentHashRing(servers: [Self.servers[1]])
        #expect(Set(alone.points.map(\.hash)) == Set(ring.points.filter { $0.server == 1 }.map(\.hash)))
    }

    @Test func losingAServerMovesOnlyItsKeysAndWalksOnAsNginxDoes() {
        let ring = ConsistentHashRing(servers: Self.servers)
        let survivors = ConsistentHashRing(servers: [Self.servers[0], Self.servers[2]])
        var moved = 0
        for i in 0..<3000 {
            let key = "user-\(i)"
            let owner = ring.server(for: key)!
            let candidates = ring.candidates(for: key)
            #expect(candidates.first == owner && Set(candidates) == [0, 1, 2])
            let after = survivors.server(for: key).map { [0, 2][$0] }
            if owner == 1 {
                moved += 1
                // nginx skips a failed server's points: the next candidate is where it lands.
                #expect(after == candidates[1])
            } else {
                #expect(after == owner)
            }
        }
        #expect((700...1300).contains(moved), "\(moved) of 3000 keys moved")
    }

    @Test func addingAServerTakesAboutAQuarterAllForItself() {
        let ring = ConsistentHashRing(servers: Self.servers)
        let grown = ConsistentHashRing(servers: Self.servers + ["127.0.0.1:17424"])
        var taken = 0
        for i in 0..<4000 {
            let before = ring.server(for: "user-\(i)")!
            let after = grown.server(for: "user-\(i)")!
            if after != before {
                #expect(after == 3)
                taken += 1
            }
        }
        #expect((600...1400).contains(taken), "\(taken) of 4000 keys moved")
    }

    @Test func anEmptyKeyIsNotHashedAndNoServersOwnNothing() {
        let ring = ConsistentHashRing(servers: Self.servers)
        #expect(ring.server(for: "") == nil)
        #expect(ring.candidates(for: "") == [0, 1, 2])
        let empty = ConsistentHashRing(servers: [])
        #expect(empty.server(for: "k") == nil && empty.candidates(for: "k").isEmpty)
    }

    @Test(arguments: [
        ("127.0.0.1:7411", "127.0.0.1", "7411"), ("[::1]:7411", "[::1]", "7411"), ("backend", "backend", ""),
        ("unix:/run/a.sock", "/run/a.sock", ""), ("UNIX:/x", "/x", ""), ("host:", "host", ""), ("a:b", "a:b", ""),
        ("h:12x", "h:12x", ""), (":80", "", "80"), ("", "", ""),
    ])
    func splitsNamesAsNginx(name: String, host: String, port: String) {
        let (h, p) = ConsistentHashRing.split(name)
        #expect(String(decoding: h, as: UTF8.self) == host && String(decoding: p, as: UTF8.self) == port)
    }

    @Test func oddKeysAndNamesStillHash() {
        let ring = ConsistentHashRing(servers: ["a", "a", "é:1"])
        // Equal names give equal points: the first in order keeps them, as after nginx's sort.
        #expect(Set(ring.points.map(\.server)) == [0, 2])
        for key in ["\u{0}", String(repeating: "k", count: 100_000), "ключ", "\u{1F600}"] {
            #expect(ring.server(for: key) != nil)
        }
    }

    /// The table of keys and owners that the Python client's ring (clients/python,
    /// adloader.ring) is checked against too (Tests/python/test_clients.py): both rings give
    /// the same server and the same walk for every key of it.
    @Test func matchesTheSharedVectorsThePythonRingIsCheckedAgainst() throws {
        struct Vector: Decodable {
            var key: String
            var server: Int?
            var candidates: [Int]
        }
        struct Ring: Decodable {
            var servers: [String]
            var weights: [Int]
            var points: Int
            var vectors: [Vector]
        }
        struct Table: Decodable { var rings: [Ring] }
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let data = try Data(contentsOf: folder.appendingPathComponent("fixtures/ring-vectors.json"))
        let table = try JSONDecoder().decode(Table.self, from: data)
        #expect(table.rings.count == 4)
        for entry in table.rings {
            let ring = ConsistentHashRing(servers: entry.servers, weights: entry.weights)
            #expect(ring.points.count == entry.points, "\(entry.servers)")
            #expect(entry.vectors.count >= 70)
            for vector in entry.vectors {
                #expect(ring.server(for: vector.key) == vector.server, "\(entry.servers) \(vector.key.prefix(20))")
                #expect(
                    ring.candidates(for: vector.key) == vector.candidates, "\(entry.servers) \(vector.key.prefix(20))")
            }
        }
    }
}
