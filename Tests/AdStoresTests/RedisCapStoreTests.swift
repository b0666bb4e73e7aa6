import AdLoaderCore
import AdLoaderTestSupport
import AdStores
import Foundation
import Testing

/// The shared cap-store behaviour against a real redis-server (started on a free loopback
/// port), and Redis' own: keys, expiry, outage and recovery.
@Suite(.serialized) struct RedisCapStoreTests {
    let server: RedisServer

    init() throws { server = try RedisServer() }

    @Test(arguments: CapStoreBehaviour.names)
    func behaviour(_ name: String) {
        let port = server.port
        let failures = CapStoreBehaviour.run(name, persistent: true) { RedisCapStore(host: "127.0.0.1", port: port) }
        #expect(failures == [])
        server.stop()
    }

    static let now = AdInstant(unixMilliseconds: 1_796_119_200_000)
    static let key = CapKey(
        loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(at: now, utcOffsetSeconds: 3_600), utcOffsetSeconds: 3_600)

    func call(_ store: RedisCapStore, at now: AdInstant = now, confirm: Bool = false) -> Result<AppOpenCounts, CapStoreError>? {
        var result: Result<AppOpenCounts, CapStoreError>?
        if confirm {
            store.confirmShow(for: Self.key, at: now, sessionTimeout: .seconds(60)) { result = $0 }
        } else {
            store.counts(for: Self.key, at: now, sessionTimeout: .seconds(60)) { result = $0 }
        }
        return result
    }

    @Test func anOutageFailsCallsAtOnceAndTheStoreRecoversByItself() throws {
        defer { server.stop() }
        let store = RedisCapStore(host: "127.0.0.1", port: server.port, reconnectInterval: .seconds(1))
        defer { store.close() }
        #expect(call(store, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        server.stop()
        guard case .failure(let error) = call(store, confirm: true) else { throw StoreTestFailure("answered while down") }
        #expect(error.message.hasPrefix("redis 127.0.0.1:\(server.port): "))
        #expect(!store.isConnected)
        // Within the retry interval: fails without trying the network.
        guard case .failure(let fast) = call(store, at: Self.now + .milliseconds(500)) else {
            throw StoreTestFailure("answered while down")
        }
        #expect(fast.message.contains("unavailable"))
        try server.start()
        // Still inside the interval: no attempt yet.
        #expect(call(store, at: Self.now + .milliseconds(900)).map { (try? $0.get()) == nil } == true)
        // After it: reconnects; the counts were lost with the non-persistent test server.
        #expect(call(store, at: Self.now + .seconds(2)) == .success(AppOpenCounts(session: 0, day: 0)))
        #expect(store.isConnected)
    }

    @Test func aServerThatIsNotThereIsAClearErrorNotAHang() throws {
        defer { server.stop() }
        let port = try RedisServer.freePort()
        let store = RedisCapStore(host: "127.0.0.1", port: port, timeout: .milliseconds(100))
        guard case .failure(let error) = call(store) else { throw StoreTestFailure("answered without a server") }
        #expect(error.message.contains("127.0.0.1:\(port)"))
    }

    @Test func keysAreLengthPrefixedAndExpire() throws {
        defer { server.stop() }
        let store = RedisCapStore(host: "127.0.0.1", port: server.port, keyPrefix: "t")
        defer { store.close() }
        _ = call(store, confirm: true)
        let dayKey = "t:1:l:1:d:d:\(Self.key.day)"
        let ttl = try redisCLI(["PTTL", dayKey])
        // The day ends at 23:00Z (midnight at +01:00), 13 hours after now; plus two days.
        let expected = 13 * 3_600_000 + 2 * 86_400_000
        #expect(Int(ttl).map { $0 > expected - 60_000 && $0 <= expected } == true, "PTTL \(ttl)")
        #expect(try redisCLI(["GET", dayKey]) == "1")
        #expect(try redisCLI(["HGET", "t:1:l:1:d:s:1:s", "count"]) == "1")
        let sessionTTL = try redisCLI(["PTTL", "t:1:l:1:d:s:1:s"])
        #expect(Int(sessionTTL).map { $0 > 50_000 && $0 <= 60_000 } == true, "session PTTL \(sessionTTL)")
    }

    func redisCLI(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        p.arguments = ["-p", String(server.port)] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        p.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

struct StoreTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
