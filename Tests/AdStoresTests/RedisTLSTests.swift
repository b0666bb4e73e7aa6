import AdLoaderCore
import AdLoaderTLS
import AdLoaderTestSupport
import AdLoaderUV
import Foundation
import Testing

@testable import AdStores

/// The Redis stores over TLS against a real redis-server started with `--tls-port` (and
/// `--port 0`: TLS only) on certificates the `openssl` command made for the test: counts move,
/// a certificate from another CA or for another name fails the calls with the reason and the
/// loop runs on, a server that wants client certificates refuses a store without one and takes
/// one with it, AUTH rides the TLS connection, and a server that goes away mid-call fails the
/// calls in flight and is reconnected after the retry interval. The pool store, the same way.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedisTLSTests {
    let certificates: TestCertificates

    init() throws { certificates = try TestCertificates() }

    static let now = RedisCapStoreTests.now
    static let key = RedisCapStoreTests.key

    func context(
        ca: String? = nil, certificate: Bool = false, serverName: String? = nil
    ) throws -> TLSClientContext {
        try TLSClientContext(
            TLSClientConfiguration(
                caFile: ca ?? certificates.caFile, certificateFile: certificate ? certificates.clientCertificate : nil,
                keyFile: certificate ? certificates.clientKey : nil, serverName: serverName))
    }

    @Test func aCapStoreOverTLSCountsDecisionsAndTheKeysAreInRedis() throws {
        defer { certificates.remove() }
        let server = try RedisServer(tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let store = loop.open(port: server.port, keyPrefix: "t", tls: try context())
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 2, day: 2)))
        #expect(loop.call(store, Self.key, at: Self.now) == .success(AppOpenCounts(session: 2, day: 2)))
        #expect(store.isConnected)
        #expect(try server.cli(["GET", "t:{1:l:1:d}:d:\(Self.key.day)"]) == "2")
        // By name too: the certificate's DNS name checked, the connection still to 127.0.0.1.
        let named = loop.open(port: server.port, keyPrefix: "t", tls: try context(serverName: "redis.test"))
        #expect(loop.call(named, Self.key, at: Self.now) == .success(AppOpenCounts(session: 2, day: 2)))
    }

    /// A Redis that speaks TLS 1.2 only (the floor): the handshake's other shape works too.
    @Test func aRedisLimitedToTLS12Answers() throws {
        defer { certificates.remove() }
        let server = try RedisServer(extraArguments: ["--tls-protocols", "TLSv1.2"], tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let store = loop.open(port: server.port, tls: try context(certificate: true))
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 2, day: 2)))
    }

    /// The whole shared cap-store behaviour, over TLS.
    @Test(arguments: CapStoreBehaviour.names)
    func behaviourOverTLS(_ name: String) throws {
        defer { certificates.remove() }
        let server = try RedisServer(tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        let tls = try context()
        let port = server.port
        let failures = CapStoreBehaviour.run(name, persistent: true, settle: loop.settle) {
            loop.open(port: port, tls: tls)
        }
        #expect(failures == [])
        #expect(loop.finish(), "handles left open")
    }

    /// A certificate the store cannot accept: every call fails with the reason (no hang, no
    /// answer), the loop's other work runs on, and a store that trusts the CA, on the same
    /// loop, answers.
    @Test(arguments: [
        ("another CA", true, nil as String?, "certificate verify failed"),
        ("another name", false, "other.test", "certificate verify failed"),
    ])
    func aCertificateTheStoreCannotAcceptFailsTheCallsAndTheLoopRunsOn(
        _ what: String, _ otherCA: Bool, _ serverName: String?, _ expected: String
    ) throws {
        defer { certificates.remove() }
        let server = try RedisServer(tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "\(what): handles left open") }
        let refused = loop.open(
            port: server.port,
            tls: try context(ca: otherCA ? certificates.otherCAFile : nil, serverName: serverName))
        var ticks = 0
        let ticker = try UVTimer(loop: loop.loop)
        ticker.start(timeout: 1, repeat: 1) { ticks += 1 }
        defer { ticker.close() }
        guard case .failure(let error) = loop.call(refused, Self.key, at: Self.now) else {
            throw StoreTestFailure("\(what): answered")
        }
        #expect(error.message.hasPrefix("redis 127.0.0.1:\(server.port): TLS handshake failed: "), "\(what): \(error)")
        #expect(error.message.contains(expected), "\(what): \(error)")
        #expect(!refused.isConnected)
        // Within the retry interval: fails at once, naming the reason.
        var fast: Result<AppOpenCounts, CapStoreError>?
        refused.counts(for: Self.key, at: Self.now + .milliseconds(10), sessionTimeout: .seconds(60)) { fast = $0 }
        guard case .failure(let fastError) = fast else { throw StoreTestFailure("\(what): not failed at once") }
        #expect(fastError.message.contains("unavailable (TLS handshake failed"), "\(what): \(fastError)")
        let trusted = loop.open(port: server.port, tls: try context())
        #expect(loop.call(trusted, Self.key, at: Self.now) == .success(AppOpenCounts()))
        let before = ticks
        let deadline = UVLoop.highResolutionNanoseconds + 5_000_000_000
        while ticks < before + 3 && UVLoop.highResolutionNanoseconds < deadline { _ = loop.loop.runOnce() }
        #expect(ticks >= before + 3, "\(what): the loop's timer stopped firing")
    }

    @Test func aServerThatWantsClientCertificatesRefusesAStoreWithoutOneAndTakesOneWithIt() throws {
        defer { certificates.remove() }
        let server = try RedisServer(extraArguments: ["--tls-auth-clients", "yes"], tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let without = loop.open(port: server.port, tls: try context())
        guard case .failure(let error) = loop.call(without, Self.key, at: Self.now) else {
            throw StoreTestFailure("answered without a client certificate")
        }
        // TLS 1.3: the client's handshake ends before the server checks its certificate; the
        // server's alert arrives as the first read.
        #expect(error.message.contains("certificate required"), "\(error)")
        let with = loop.open(port: server.port, tls: try context(certificate: true))
        #expect(loop.call(with, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
    }

    @Test func authRidesTheTLSConnection() throws {
        defer { certificates.remove() }
        let server = try RedisServer(
            extraArguments: [
                "--requirepass", "default-secret", "--user", "adloader", "on", ">user-secret", "~*", "+@all",
            ],
            tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let user = loop.open(
            port: server.port, credentials: RedisCredentials(user: "adloader", password: "user-secret"),
            tls: try context())
        #expect(loop.call(user, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        let wrong = loop.open(
            port: server.port, credentials: RedisCredentials(user: "adloader", password: "nope"), tls: try context())
        guard case .failure(let refused) = loop.call(wrong, Self.key, at: Self.now) else {
            throw StoreTestFailure("wrong password answered")
        }
        #expect(refused.message.contains("AUTH refused"), "\(refused)")
        let none = loop.open(port: server.port, tls: try context())
        guard case .failure(let anonymous) = loop.call(none, Self.key, at: Self.now) else {
            throw StoreTestFailure("no AUTH answered")
        }
        #expect(anonymous.message.contains("NOAUTH"), "\(anonymous)")
    }

    /// The server is killed while a call waits for its reply (the server paused): the call
    /// fails with the closed connection, long before its timeout; after the retry interval
    /// the store connects again, handshake and all.
    @Test func aServerGoingAwayMidCallFailsTheCallsInFlightThenTheStoreReconnects() throws {
        defer { certificates.remove() }
        let server = try RedisServer(tls: certificates)
        defer { server.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let store = loop.open(
            port: server.port, timeout: .seconds(20), reconnectInterval: .milliseconds(500), tls: try context())
        #expect(loop.call(store, Self.key, at: Self.now, confirm: true) == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(try server.cli(["CLIENT", "PAUSE", "20000", "WRITE"]) == "OK")
        var results: [Result<AppOpenCounts, CapStoreError>] = []
        for _ in 0..<3 {
            store.confirmShow(for: Self.key, at: Self.now, sessionTimeout: .seconds(60)) { results.append($0) }
        }
        // The commands went out inside the calls (the connection is open); wait (bounded) until
        // the server holds the first one (paused: a blocked client).
        var polls = 0
        while !(try server.cli(["INFO", "clients"]).contains("blocked_clients:1")) && polls < 250 {
            polls += 1
            usleep(20_000)
        }
        #expect(polls < 250, "the server never held the call")
        #expect(results.isEmpty && store.pendingCalls == 3)
        let began = Date()
        server.stop()
        loop.settle()
        #expect(Date().timeIntervalSince(began) < 5, "failed by the timeout, not by the closed connection")
        #expect(results.count == 3)
        for result in results {
            guard case .failure(let error) = result else { throw StoreTestFailure("answered by a dead server") }
            // The end of the stream, or a reset when the killed server had not read every record.
            #expect(
                error.message == "redis 127.0.0.1:\(server.port): connection closed"
                    || error.message.contains("ECONNRESET"), "\(error)")
        }
        try server.start()
        // The counts went with the non-persistent server.
        #expect(
            loop.call(store, Self.key, at: Self.now + .seconds(1), confirm: true)
                == .success(AppOpenCounts(session: 1, day: 1)))
        #expect(store.isConnected)
    }

    /// TLS to a server answering in plaintext (a Redis without TLS answers the hello with an
    /// error once a newline came by), and plaintext to a TLS port: a clear failure, never a hang.
    @Test func aTLSMismatchWithTheServerIsAClearError() throws {
        defer { certificates.remove() }
        let tlsServer = try RedisServer(tls: certificates)
        defer { tlsServer.stop() }
        let plainServer = try FakeRedisServer(answer: Array("-ERR unknown command\r\n".utf8))
        defer { plainServer.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "handles left open") }
        let tlsToPlain = loop.open(port: plainServer.port, timeout: .seconds(5), tls: try context())
        guard case .failure(let handshake) = loop.call(tlsToPlain, Self.key, at: Self.now) else {
            throw StoreTestFailure("TLS to a plaintext port answered")
        }
        #expect(handshake.message.contains("TLS handshake failed"), "\(handshake)")
        let plainToTLS = loop.open(port: tlsServer.port, timeout: .seconds(5))
        guard case .failure(let closed) = loop.call(plainToTLS, Self.key, at: Self.now) else {
            throw StoreTestFailure("plaintext to a TLS port answered")
        }
        #expect(closed.message.hasPrefix("redis 127.0.0.1:\(tlsServer.port): "), "\(closed)")
        #expect(!closed.message.contains("no reply within"), "\(closed)")
    }

    /// A server that answers the hello with half a record and closes, or with a record longer
    /// than TLS allows: the handshake fails with the reason at once, not at the timeout.
    @Test(arguments: [
        ("half a record, then close", [22, 3, 3, 0, 64, 2, 0, 0] as [UInt8], true, "closed during the handshake"),
        ("a record longer than TLS allows", [22, 3, 3, 0xFF, 0xFF, 2, 0, 0], false, "TLS handshake failed"),
    ])
    func aBrokenHandshakeFailsAtOnceWithTheReason(
        _ what: String, _ answer: [UInt8], _ close: Bool, _ expected: String
    ) throws {
        defer { certificates.remove() }
        let fake = try FakeRedisServer(answer: answer, closeAfterAnswer: close)
        defer { fake.stop() }
        let loop = try StoreLoop()
        defer { #expect(loop.finish(), "\(what): handles left open") }
        let store = loop.open(port: fake.port, timeout: .seconds(10), tls: try context())
        let began = Date()
        guard case .failure(let error) = loop.call(store, Self.key, at: Self.now) else {
            throw StoreTestFailure("\(what): answered")
        }
        #expect(error.message.contains(expected), "\(what): \(error)")
        #expect(Date().timeIntervalSince(began) < 5, "\(what): failed by the timeout")
    }

    @Test func thePoolStoreOverTLSRoundTripsAndRefusesAnUntrustedServer() throws {
        defer { certificates.remove() }
        let server = try RedisServer(extraArguments: ["--tls-auth-clients", "yes"], tls: certificates)
        defer { server.stop() }
        let key = RedisPoolStoreTests.key
        let written = SQLitePoolStoreTests.snapshots
        let first = try RedisPoolStore(
            host: "127.0.0.1", port: server.port, key: key, timeout: .seconds(2), credentials: nil,
            tls: try context(certificate: true))
        #expect(first.location == "rediss://127.0.0.1:\(server.port)/\(key)")
        first.putNotice(OutboxNotice(id: 4, url: "http://n/4"), source: "a")
        #expect(try first.saveSuspension(written) > 1_000)
        first.close()
        let second = try RedisPoolStore(
            host: "127.0.0.1", port: server.port, key: key, timeout: .seconds(2), credentials: nil,
            tls: try context(certificate: true))
        #expect(try second.loadSuspension() == written)
        #expect(second.pendingNotices(source: "a") == [OutboxNotice(id: 4, url: "http://n/4")])
        second.close()
        let untrusting = try context(ca: certificates.otherCAFile, certificate: true)
        do {
            _ = try RedisPoolStore(
                host: "127.0.0.1", port: server.port, key: key, timeout: .seconds(2), credentials: nil,
                tls: untrusting)
            Issue.record("opened a store on a server whose certificate another CA signed")
        } catch {
            #expect(error.code == .io && error.message.contains("certificate verify failed"), "\(error)")
        }
    }
}
