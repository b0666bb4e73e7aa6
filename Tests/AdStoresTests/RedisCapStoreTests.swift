import AdLoaderCore
import AdLoaderTestSupport
import AdLoaderUV
import Foundation
import Testing

@testable import AdStores

/// The shared cap-store behaviour against a real redis-server (started on a free loopback
/// port), and Redis' own: hash-tagged keys, expiry, EVALSHA and NOSCRIPT, AUTH, a call that
/// never waits on the loop, outage and recovery. The store runs on a real libuv loop that
/// the test drives until the store answered (StoreLoop, bounded).
@Suite(.serialized) struct RedisCapStoreTests {
    let server: RedisServer

    init() throws { server = try RedisServer() }

    @Test(arguments: CapStoreBehaviour.names)
    func behaviour(_ name: String) throws {
        let port = server.port
        let loop = try StoreLoop()
        let failures = CapStoreBehaviour.run(name, persistent: true, settle: loop.settle) { loop.open(port: port) }
        #expect(failures == [])
        #expect(loop.finish(), "handles left open")
        server.stop()
    }

    static let now = AdInstant(unixMilliseconds: 1_796_119_200_000)
    static let key = CapKey(
        loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(at: now, utcOffsetSeconds: 3_600),
        utcOffsetSeconds: 3_600)

    @Test func anOutageFailsCallsAtOnceAndTheStoreRecoversByItself() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: server.port, reconnectInterval: .seconds(1))
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        server.stop()
        guard case .failure(let error) = loop.call(store, Self.key, at: Self.now, confirm: true) else {
            throw StoreTestFailure("answered while down")
        }
        #expect(error.message.hasPrefix("redis 127.0.0.1:\(server.port): "))
        #expect(!store.isConnected)
        // Within the retry interval: fails at once (inside the call), without the network.
        var fast: Result<AppOpenCounts, CapStoreError>?
        store.counts(for: Self.key, at: Self.now + .milliseconds(500), sessionTimeout: .seconds(60)) { fast = $0 }
        guard case .failure(let fastError) = fast else { throw StoreTestFailure("did not fail at once while down") }
        #expect(fastError.message.contains("unavailable"))
        try server.start()
        // Still inside the interval: no attempt yet.
        #expect(loop.call(store, Self.key, at: Self.now + .milliseconds(900)).map { (try? $0.get()) == nil } == true)
        // After it: reconnects; the counts were lost with the non-persistent test server.
        #expect(loop.call(store, Self.key, at: Self.now + .seconds(2)) == .success(AppOpenCounts(session: 0, day: 0)))
        #expect(store.isConnected)
    }

    @Test func aHostNameIsResolvedOffTheLoopAndAnUnknownOneIsAClearError() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        // localhost comes from /etc/hosts: the lookup runs on libuv's thread pool, never the loop.
        let named = loop.open(port: server.port, host: "localhost")
        #expect(loop.call(named, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(named.isConnected)
        // A name getaddrinfo refuses by itself (no lookup leaves the machine) fails the call.
        let unknown = loop.open(port: server.port, host: "bad name")
        guard case .failure(let error) = loop.call(unknown, Self.key, at: Self.now) else {
            throw StoreTestFailure("answered through a name that does not resolve")
        }
        #expect(error.message.contains("cannot resolve bad name: EAI_"), "\(error.message)")
        #expect(!unknown.isConnected)
    }

    @Test func aServerThatIsNotThereIsAClearErrorNotAHang() throws {
        defer { server.stop() }
        let port = try RedisServer.freePort()
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: port, timeout: .milliseconds(100))
        guard case .failure(let error) = loop.call(store, Self.key, at: Self.now) else {
            throw StoreTestFailure("answered without a server")
        }
        #expect(error.message.contains("127.0.0.1:\(port)"))
    }

    /// A Redis that does not answer (CLIENT PAUSE): the call returns at once without an
    /// answer, the loop runs on, and the reply timer fails the call with the reason.
    @Test func aSlowRedisNeverHoldsTheLoopAndTheTimeoutFailsTheCall() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: server.port, timeout: .milliseconds(100))
        #expect(loop.call(store, Self.key, at: Self.now) == .success(AppOpenCounts()))
        #expect(try server.cli(["CLIENT", "PAUSE", "1000", "WRITE"]) == "OK")
        var result: Result<AppOpenCounts, CapStoreError>?
        store.confirmShow(for: Self.key, at: Self.now, sessionTimeout: .seconds(60)) { result = $0 }
        #expect(result == nil, "answered inside the call: the loop would have waited")
        #expect(store.pendingCalls == 1)
        loop.settle()
        guard case .failure(let error) = result else {
            throw StoreTestFailure("no timeout: \(String(describing: result))")
        }
        #expect(error.message.contains("no reply within"), "\(error)")
        _ = try server.cli(["CLIENT", "UNPAUSE"])
    }

    @Test func keysAreHashTaggedLengthPrefixedAndExpire() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: server.port, keyPrefix: "t")
        _ = loop.call(store, Self.key, at: Self.now, confirm: true)
        let dayKey = "t:{1:l:1:d}:d:\(Self.key.day)"
        let sessionKey = "t:{1:l:1:d}:s:1:s"
        let ttl = try server.cli(["PTTL", dayKey])
        // The day ends at 23:00Z (midnight at +01:00), 13 hours after now; plus two days.
        let expected = 13 * 3_600_000 + 2 * 86_400_000
        #expect(Int(ttl).map { $0 > expected - 60_000 && $0 <= expected } == true, "PTTL \(ttl)")
        #expect(try server.cli(["GET", dayKey]) == "1")
        #expect(try server.cli(["HGET", sessionKey, "count"]) == "1")
        let sessionTTL = try server.cli(["PTTL", sessionKey])
        #expect(Int(sessionTTL).map { $0 > 50_000 && $0 <= 60_000 } == true, "session PTTL \(sessionTTL)")
    }

    @Test func callsUseEVALSHAAndSurviveAScriptFlush() throws {
        defer { server.stop() }
        #expect(try server.cli(["SCRIPT", "LOAD", RedisCapStore.script]) == RedisCapStore.scriptDigest)
        _ = try server.cli(["SCRIPT", "FLUSH"])
        _ = try server.cli(["CONFIG", "RESETSTAT"])
        let loop = try StoreLoop()
        defer { loop.finish() }
        let store = loop.open(port: server.port)
        // First call: NOSCRIPT, retried as EVAL (which caches it); then EVALSHA only.
        for i in 1...3 {
            #expect(
                loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: i, day: i)))
        }
        _ = try server.cli(["SCRIPT", "FLUSH"])
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 4, day: 4)))
        let stats = try server.cli(["INFO", "commandstats"])
        #expect(stats.contains("cmdstat_evalsha:calls=4"), "\(stats)")
        #expect(stats.contains("cmdstat_eval:calls=2"), "\(stats)")
    }

    @Test func authWithAnACLUserAndWithTheDefaultPassword() throws {
        server.stop()
        let secured = try RedisServer(extraArguments: [
            "--requirepass", "default-secret", "--user", "adloader", "on", ">user-secret", "~adloader:*", "+@all",
        ])
        defer { secured.stop() }
        let loop = try StoreLoop()
        defer { loop.finish() }
        let user = loop.open(
            port: secured.port, credentials: RedisCredentials(user: "adloader", password: "user-secret"))
        #expect(loop.call(user, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        let byDefault = loop.open(port: secured.port, credentials: RedisCredentials(password: "default-secret"))
        #expect(loop.call(byDefault, Self.key, at: Self.now) == .success(AppOpenCounts(session: 1, day: 1)))
        let wrong = loop.open(port: secured.port, credentials: RedisCredentials(user: "adloader", password: "nope"))
        guard case .failure(let refused) = loop.call(wrong, Self.key, at: Self.now) else {
            throw StoreTestFailure("wrong password answered")
        }
        #expect(refused.message.contains("AUTH refused"), "\(refused)")
        #expect(!wrong.isConnected)
        let none = loop.open(port: secured.port)
        guard case .failure(let anonymous) = loop.call(none, Self.key, at: Self.now) else {
            throw StoreTestFailure("no AUTH answered")
        }
        #expect(anonymous.message.contains("NOAUTH"), "\(anonymous)")
    }

    /// Something that is not Redis, or a Redis answering nonsense: every call gets a clear
    /// failure naming the address, and the loop and its handles end clean.
    @Test(arguments: [
        ("protocol garbage", Array("hello, this is not RESP\r\n".utf8), false, "Protocol error"),
        ("a status instead of the script's array", Array("+OK\r\n".utf8), false, "unexpected reply"),
        ("an array of the wrong shape", Array("*1\r\n:5\r\n".utf8), false, "unexpected reply"),
        ("an error reply", Array("-ERR unknown command\r\n".utf8), false, "ERR unknown command"),
        ("a half reply, then close", Array("*2\r\n:1".utf8), true, "127.0.0.1"),
        ("a huge bulk length", Array("$99999999999999999999\r\n".utf8), false, "127.0.0.1"),
    ])
    func aBrokenServerIsAClearErrorAndNothingLeaks(_ what: String, _ answer: [UInt8], _ close: Bool, _ expected: String)
        throws
    {
        defer { server.stop() }
        let fake = try FakeRedisServer(answer: answer, closeAfterAnswer: close)
        defer { fake.stop() }
        let loop = try StoreLoop()
        let store = loop.open(port: fake.port, timeout: .milliseconds(300))
        guard case .failure(let error) = loop.call(store, Self.key, at: Self.now, confirm: true) else {
            throw StoreTestFailure("\(what): answered")
        }
        #expect(error.message.hasPrefix("redis 127.0.0.1:\(fake.port): "), "\(what): \(error)")
        #expect(error.message.contains(expected), "\(what): \(error)")
        #expect(loop.finish(), "\(what): handles left open")
    }

    /// Thousands of calls in flight on one connection (pipelined before the first reply): each
    /// answered once, in the order sent, with its own device's counts.
    @Test func manyCallsInFlightOnOneConnectionAreAnsweredInOrder() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let store = loop.open(port: server.port, timeout: .seconds(5))
        var answered: [Int] = []
        var failures: [CapStoreError] = []
        for i in 0..<3_000 {
            let key = CapKey(
                loader: "l", deviceID: "d\(i % 7)", sessionID: "s", day: Self.key.day, utcOffsetSeconds: 3_600)
            store.confirmShow(for: key, at: Self.now, sessionTimeout: .seconds(60)) { result in
                switch result {
                case .success(let counts): if counts.day == i / 7 + 1 { answered.append(i) }
                case .failure(let error): failures.append(error)
                }
            }
        }
        #expect(store.pendingCalls == 3_000)
        loop.settle()
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(answered == Array(0..<3_000))
    }

    /// The loop stalls longer than the reply timeout while the reply arrives: libuv runs the
    /// expired timer before it reads, and the call must still get its answer (the timer runs
    /// once more when the server's bytes wait unread); a reply that never comes still times out.
    @Test func aReplyWaitingBehindALoopStallIsReadNotTimedOut() throws {
        defer { server.stop() }
        let uv = try UVLoop()
        let connection = try RedisConnection(
            address: RedisAddress(host: "127.0.0.1", port: server.port), loop: uv, timeout: .milliseconds(50),
            reconnectInterval: .seconds(1), credentials: nil)
        func call(_ arguments: [String]) -> Result<RedisReply, CapStoreError>? {
            var result: Result<RedisReply, CapStoreError>?
            connection.send(arguments, now: Self.now) { result = $0 }
            for _ in 0..<10_000 where result == nil { _ = uv.runOnce() }
            return result
        }
        #expect(try call(["PING"])?.get() == .status("PONG"))  // connected
        var stalled: Result<RedisReply, CapStoreError>?
        connection.send(["PING"], now: Self.now) { stalled = $0 }
        // The stall: no loop pass until the reply waits in the socket and the timeout is long past.
        let start = UVLoop.highResolutionNanoseconds
        while !connection.hasUnreadReply && UVLoop.highResolutionNanoseconds - start < 5_000_000_000 { usleep(1_000) }
        #expect(connection.hasUnreadReply)
        while UVLoop.highResolutionNanoseconds - start < 120_000_000 { usleep(10_000) }
        for _ in 0..<10_000 where stalled == nil { _ = uv.runOnce() }
        #expect(try stalled?.get() == .status("PONG"))
        #expect(connection.isConnected)
        // A reply that never comes (the server paused) still fails at its timeout.
        #expect(try server.cli(["CLIENT", "PAUSE", "1000", "ALL"]) == "OK")
        guard case .failure(let error) = call(["PING"]) else { throw StoreTestFailure("answered while paused") }
        #expect(error.message.contains("no reply within"), "\(error.message)")
        _ = try server.cli(["CLIENT", "UNPAUSE"])
        connection.close()
        #expect(uv.runUntilIdle())
        try uv.close()
    }

    @Test func closeFailsWhatIsInFlightAndLeavesNoHandle() throws {
        defer { server.stop() }
        let loop = try StoreLoop()
        let store = loop.open(port: server.port)
        var result: Result<AppOpenCounts, CapStoreError>?
        store.confirmShow(for: Self.key, at: Self.now, sessionTimeout: .seconds(60)) { result = $0 }
        store.close()
        guard case .failure(let error) = result else {
            throw StoreTestFailure("not failed by close: \(String(describing: result))")
        }
        #expect(error.message.contains("store closed"))
        #expect(loop.finish(), "handles left open")
    }
}

struct StoreTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
