import AdLoaderCore
import AdLoaderLogging
import AdLoaderUV
import Foundation
import Testing

@testable import AdLoaderTLS

/// The client side (what the Redis stores use) against the daemon's own TLS acceptor over
/// loopback TCP, both on one libuv loop: the handshake completes over several loop passes (one
/// of the server's records per pass), plaintext flows both ways, a client certificate reaches
/// the server as the caller, a name the certificate does not carry fails with the reason, and
/// files that cannot be used name their setting.
@Suite(.serialized, .timeLimit(.minutes(1))) struct TLSClientContextTests {
    /// A self-signed client certificate, made once (the server's is TLSAcceptorTests.files).
    static let client: (cert: String, key: String) = {
        let directory = TLSAcceptorTests.files.directory
        let cert = directory + "/client.pem"
        let key = directory + "/client.key"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out",
            cert, "-days", "2", "-subj", "/CN=redis-client",
        ]
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
        return (cert, key)
    }()

    final class Next: ByteStreamAcceptor {
        var accepted: [(stream: any ByteStream, peer: String)] = []
        func accept(_ stream: any ByteStream, peer: String) { accepted.append((stream, peer)) }
    }

    /// A TLS listener on loopback (the daemon's acceptor) and a client connection to it.
    final class Pair {
        let loop: UVLoop
        let clock: LoopClock
        let listener: UVTCPHandle
        let acceptor: TLSAcceptor
        let next = Next()
        var accepted: [UVTCPHandle] = []
        var client: UVTCPHandle?
        var stream: TLSByteStream?

        init(clientAuth: TLSConfiguration.ClientAuth = .none) throws {
            loop = try UVLoop()
            clock = try LoopClock(loop: loop)
            var settings = TLSConfiguration()
            settings.certificateFile = TLSAcceptorTests.files.cert
            settings.keyFile = TLSAcceptorTests.files.key
            if clientAuth != .none {
                settings.clientCAFile = TLSClientContextTests.client.cert
                settings.clientAuth = clientAuth
            }
            acceptor = TLSAcceptor(
                context: try TLSContext(settings), next: next, clock: clock, scheduler: clock,
                handshakeTimeout: .seconds(5), maxPending: 8, logger: Logger(level: .error))
            listener = try UVTCPHandle(loop: loop)
            try listener.bind(host: "127.0.0.1", port: 0)
            try listener.listen { [unowned self] _ in
                guard let connection = try? UVTCPHandle(loop: self.loop) else { return }
                try? self.listener.accept(into: connection)
                self.accepted.append(connection)
                self.acceptor.accept(connection, peer: "client")
            }
        }

        /// Connects with `context`; the handshake's result and the loop passes it took.
        func connect(_ context: TLSClientContext) throws -> (result: Result<Void, TLSHandshakeFailure>?, passes: Int) {
            let port = try #require(listener.localAddress?.port)
            let client = try UVTCPHandle(loop: loop)
            self.client = client
            var result: Result<Void, TLSHandshakeFailure>?
            try client.connect(host: "127.0.0.1", port: port) { [unowned self] error in
                guard error == nil else { return }
                self.stream = try? context.connect(over: client, host: "127.0.0.1", port: port, loop: self.loop) {
                    result = $0
                }
            }
            var passes = 0
            while result == nil && passes < 10_000 {
                _ = loop.runOnce()
                passes += 1
            }
            return (result, passes)
        }

        func finish() -> Bool {
            stream?.close()
            client?.close()
            for stream in next.accepted { stream.stream.close() }
            acceptor.closeAll()
            listener.close()
            clock.close()
            _ = loop.runUntilIdle()
            let left = loop.closeRemainingHandles()
            do { try loop.close() } catch { return false }
            return left.isEmpty
        }
    }

    func context(certificate: Bool = false, serverName: String? = nil) throws -> TLSClientContext {
        try TLSClientContext(
            TLSClientConfiguration(
                caFile: TLSAcceptorTests.files.cert, certificateFile: certificate ? Self.client.cert : nil,
                keyFile: certificate ? Self.client.key : nil, serverName: serverName))
    }

    @Test func theHandshakeTakesSeveralLoopPassesAndPlaintextFlowsBothWays() throws {
        let pair = try Pair()
        let (result, passes) = try pair.connect(try context())
        #expect(result.map { (try? $0.get()) != nil } == true, "\(String(describing: result))")
        // ServerHello, ChangeCipherSpec, EncryptedExtensions, Certificate, CertificateVerify,
        // Finished: one per pass.
        #expect(passes >= 5, "\(passes) loop passes")
        let client = try #require(pair.stream)
        #expect(client.protocolVersion == "TLSv1.3")
        // The server's side: plaintext both ways.
        for _ in 0..<100 where pair.next.accepted.isEmpty { _ = pair.loop.runOnce() }
        let server = try #require(pair.next.accepted.first?.stream)
        var atServer: [UInt8] = []
        try server.readStart { if case .success(let bytes) = $0 { atServer += bytes } }
        var atClient: [UInt8] = []
        try client.readStart { if case .success(let bytes) = $0 { atClient += bytes } }
        _ = try Array("PING".utf8).withUnsafeBytes { try client.tryWrite($0) }
        for _ in 0..<1_000 where atServer.count < 4 { _ = pair.loop.runOnce() }
        #expect(String(decoding: atServer, as: UTF8.self) == "PING")
        _ = try Array("+PONG".utf8).withUnsafeBytes { try server.tryWrite($0) }
        for _ in 0..<1_000 where atClient.count < 5 { _ = pair.loop.runOnce() }
        #expect(String(decoding: atClient, as: UTF8.self) == "+PONG")
        #expect(pair.finish(), "handles left open")
    }

    /// The session of a closed connection is offered by the next one to the same server, which
    /// resumes it: no certificate to decode and check on the loop again.
    @Test func aReconnectResumesTheSession() throws {
        let pair = try Pair()
        let context = try context()
        let (first, _) = try pair.connect(context)
        #expect(first.map { (try? $0.get()) != nil } == true, "\(String(describing: first))")
        let stream = try #require(pair.stream)
        #expect(!stream.isResumed)
        for _ in 0..<100 where pair.next.accepted.isEmpty { _ = pair.loop.runOnce() }
        let server = try #require(pair.next.accepted.first?.stream)
        // A read after the handshake takes the server's session tickets with it.
        var atClient: [UInt8] = []
        try stream.readStart { if case .success(let bytes) = $0 { atClient += bytes } }
        _ = try Array("+OK".utf8).withUnsafeBytes { try server.tryWrite($0) }
        for _ in 0..<1_000 where atClient.count < 3 { _ = pair.loop.runOnce() }
        stream.close()
        let (second, _) = try pair.connect(context)
        #expect(second.map { (try? $0.get()) != nil } == true, "\(String(describing: second))")
        #expect(pair.stream?.isResumed == true)
        // Another server (another port) is not offered this one's session.
        let other = try Pair()
        let (third, _) = try other.connect(context)
        #expect(third.map { (try? $0.get()) != nil } == true)
        #expect(other.stream?.isResumed == false)
        #expect(other.finish(), "handles left open")
        #expect(pair.finish(), "handles left open")
    }

    @Test func aClientCertificateReachesTheServerAsTheCaller() throws {
        let pair = try Pair(clientAuth: .required)
        let (result, _) = try pair.connect(try context(certificate: true))
        #expect(result.map { (try? $0.get()) != nil } == true, "\(String(describing: result))")
        for _ in 0..<100 where pair.next.accepted.isEmpty { _ = pair.loop.runOnce() }
        #expect(pair.next.accepted.first?.peer == "client (CN=redis-client)")
        #expect(pair.finish(), "handles left open")
    }

    @Test func aNameTheCertificateDoesNotCarryFailsWithTheReason() throws {
        let pair = try Pair()
        let (result, _) = try pair.connect(try context(serverName: "redis.example"))
        guard case .failure(let failure)? = result else {
            throw TLSTestFailure("not refused: \(String(describing: result))")
        }
        #expect(failure.kind == .protocolError)
        #expect(failure.reason.contains("certificate verify failed (certificate: hostname mismatch)"), "\(failure)")
        #expect(pair.finish(), "handles left open")
    }

    @Test func filesThatCannotBeUsedNameTheirSetting() {
        func field(_ configuration: TLSClientConfiguration) -> String? {
            do {
                _ = try TLSClientContext(configuration)
                return nil
            } catch {
                return error.field
            }
        }
        let files = TLSAcceptorTests.files
        let missing = files.directory + "/missing.pem"
        #expect(field(TLSClientConfiguration(caFile: files.cert)) == nil)
        #expect(field(TLSClientConfiguration()) == nil, "the system's trust store")
        #expect(field(TLSClientConfiguration(caFile: missing)) == "caFile")
        #expect(field(TLSClientConfiguration(caFile: files.key)) == "caFile")
        #expect(field(TLSClientConfiguration(certificateFile: Self.client.cert, keyFile: missing)) == "keyFile")
        #expect(field(TLSClientConfiguration(certificateFile: Self.client.cert, keyFile: files.key)) == "keyFile")
        #expect(field(TLSClientConfiguration(certificateFile: missing, keyFile: Self.client.key)) == "certificateFile")
        #expect(
            field(TLSClientConfiguration(certificateFile: files.key, keyFile: Self.client.key)) == "certificateFile")
        #expect(field(TLSClientConfiguration(certificateFile: Self.client.cert)) == "keyFile")
        #expect(field(TLSClientConfiguration(keyFile: Self.client.key)) == "certificateFile")
    }
}

struct TLSTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
