import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderUV
import COpenSSL
import Foundation
import Testing

@testable import AdLoaderTLS

/// The TLS layer on an in-process stream with an OpenSSL client on memory BIOs as the peer and
/// the manual clock: handshake, ALPN, plaintext both ways, a reader that stops and resumes,
/// garbage, silence, certificate files that do not load.
@Suite(.serialized) struct TLSAcceptorTests {
    /// A certificate and key made once with the `openssl` command.
    static let files: (directory: String, cert: String, key: String) = {
        let directory = NSTemporaryDirectory() + "adloader-tls-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cert = directory + "/server.pem"
        let key = directory + "/server.key"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out",
            cert,
            "-days", "2", "-subj", "/CN=test", "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
        return (directory, cert, key)
    }()

    final class Next: ByteStreamAcceptor {
        var accepted: [(stream: any ByteStream, peer: String)] = []
        func accept(_ stream: any ByteStream, peer: String) { accepted.append((stream, peer)) }
    }

    /// An OpenSSL client whose records travel through an ``InProcessStream``.
    final class Client {
        let context: OpaquePointer
        let ssl: OpaquePointer
        let input: OpaquePointer
        let output: OpaquePointer

        init(alpn: [UInt8]? = nil) {
            context = SSL_CTX_new(TLS_client_method())!
            if let alpn { _ = SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) }
            ssl = SSL_new(context)!
            input = BIO_new(BIO_s_mem())!
            output = BIO_new(BIO_s_mem())!
            SSL_set_bio(ssl, input, output)
            SSL_set_connect_state(ssl)
        }

        deinit {
            SSL_free(ssl)
            SSL_CTX_free(context)
        }

        /// Moves records both ways until neither side has more; returns whether the handshake is done.
        @discardableResult
        func exchange(_ stream: InProcessStream) -> Bool {
            for _ in 0..<20 {
                _ = SSL_do_handshake(ssl)
                let out = drain()
                if !out.isEmpty { stream.clientSends(out) }
                let back = stream.takeReceived()
                if !back.isEmpty { _ = back.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) } }
                if out.isEmpty && back.isEmpty { break }
            }
            return SSL_is_init_finished(ssl) == 1
        }

        func send(_ text: String, over stream: InProcessStream) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            stream.clientSends(drain())
        }

        func read(from stream: InProcessStream) -> String {
            let back = stream.takeReceived()
            _ = back.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
            var text = [UInt8](repeating: 0, count: 65_536)
            let count = text.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            return count > 0 ? String(decoding: text.prefix(Int(count)), as: UTF8.self) : ""
        }

        var alpn: String? {
            var selected: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &selected, &length)
            guard let selected, length > 0 else { return nil }
            return String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self)
        }

        private func drain() -> [UInt8] {
            var result: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
                if count <= 0 { break }
                result += chunk.prefix(Int(count))
            }
            return result
        }
    }

    let clock = ManualClock()
    let next = Next()

    func acceptor(timeout: Duration = .seconds(5), maxPending: Int = 8) throws -> TLSAcceptor {
        var settings = TLSConfiguration()
        settings.certificateFile = Self.files.cert
        settings.keyFile = Self.files.key
        return TLSAcceptor(
            context: try TLSContext(settings), next: next, clock: clock, scheduler: clock, handshakeTimeout: timeout,
            maxPending: maxPending, logger: Logger(level: .error))
    }

    @Test func theHandshakeCompletesAndHandsOnAStreamOfPlaintextBothWays() throws {
        let tls = try acceptor()
        let stream = InProcessStream()
        tls.accept(stream, peer: "127.0.0.1:5000")
        let client = Client(alpn: [2] + Array("h2".utf8))
        #expect(client.exchange(stream))
        #expect(client.alpn == "h2")
        try #require(next.accepted.count == 1)
        #expect(next.accepted[0].peer == "127.0.0.1:5000")
        #expect(tls.counts.completed == 1 && tls.pendingCount == 0)
        let server = next.accepted[0].stream
        var got = ""
        try server.readStart { result in
            if case .success(let bytes) = result { got += String(decoding: bytes, as: UTF8.self) }
        }
        client.send("PRI * HTTP/2.0", over: stream)
        #expect(got == "PRI * HTTP/2.0")
        let answer = Array("hello, client".utf8)
        #expect(try answer.withUnsafeBytes { try server.tryWrite($0) } == answer.count)
        #expect(client.read(from: stream) == "hello, client")
        try answer.withUnsafeBytes { try server.write(copying: $0) { _ in } }
        stream.clientReads()
        #expect(client.read(from: stream) == "hello, client")
    }

    @Test func aReaderThatStopsGetsTheRestOnlyAfterItResumesAndNotInsideTheResume() throws {
        let tls = try acceptor()
        let stream = InProcessStream()
        tls.accept(stream, peer: "p")
        let client = Client()
        #expect(client.exchange(stream))
        let server = try #require(next.accepted.first?.stream)
        var got: [String] = []
        try server.readStart { result in
            if case .success(let bytes) = result {
                got.append(String(decoding: bytes, as: UTF8.self))
                server.readStop()
            }
        }
        client.send("one", over: stream)
        client.send("two", over: stream)
        #expect(got == ["one"])
        #expect(server.hasUnreadInput)
        try server.resumeReading()
        #expect(got == ["one"], "not delivered inside resumeReading")
        clock.advance(by: .milliseconds(1))
        #expect(got == ["one", "two"])
    }

    @Test func garbageIsClosedAndAWrongHandshakeMessageGetsAnAlert() throws {
        let tls = try acceptor()
        let http = InProcessStream()
        tls.accept(http, peer: "p")
        http.clientSends(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(http.isClosed)
        // A TLS record holding a ServerHello from the client: "unexpected message".
        let wrong = InProcessStream()
        tls.accept(wrong, peer: "p")
        wrong.clientSends([0x16, 0x03, 0x01, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00])
        #expect(wrong.isClosed)
        #expect(wrong.takeReceived().first == 0x15, "a TLS alert record")
        #expect(tls.counts.failed == 2 && next.accepted.isEmpty && tls.pendingCount == 0)
    }

    @Test func failedHandshakesAreLoggedAtMostOncePerIntervalWithACountOfTheRest() throws {
        let log = CapturingLogHandler()
        var settings = TLSConfiguration()
        settings.certificateFile = Self.files.cert
        settings.keyFile = Self.files.key
        let tls = TLSAcceptor(
            context: try TLSContext(settings), next: next, clock: clock, scheduler: clock,
            handshakeTimeout: .seconds(5),
            maxPending: 8, logger: Logger(level: .info, handler: log))
        func garbage() {
            let stream = InProcessStream()
            tls.accept(stream, peer: "p")
            stream.clientSends(Array("garbage!".utf8))
        }
        for _ in 0..<5 { garbage() }
        clock.advance(by: TLSAcceptor.failureLogInterval)
        garbage()
        let lines = log.lines.filter { $0.contains("TLS handshake failed") }
        #expect(lines.count == 2)
        #expect(lines.last?.contains("\"notLoggedSinceLast\":4") == true, "\(lines)")
        #expect(tls.counts.failed == 6)
    }

    @Test func silenceIsClosedAtTheHandshakeTimeout() throws {
        let tls = try acceptor(timeout: .seconds(2))
        let stream = InProcessStream()
        tls.accept(stream, peer: "p")
        stream.clientSends([0x16, 0x03, 0x01])  // a record header cut short
        clock.advance(by: .milliseconds(1_999))
        #expect(!stream.isClosed)
        clock.advance(by: .milliseconds(1))
        #expect(stream.isClosed && tls.counts.timedOut == 1 && next.accepted.isEmpty)
    }

    @Test func handshakesBeyondTheBoundAreClosedAtOnce() throws {
        let tls = try acceptor(maxPending: 2)
        let streams = (0..<3).map { _ in InProcessStream() }
        for stream in streams { tls.accept(stream, peer: "p") }
        #expect(streams.map(\.isClosed) == [false, false, true])
        tls.closeAll()
        #expect(streams.allSatisfy(\.isClosed) && tls.pendingCount == 0)
    }

    @Test func filesThatDoNotLoadNameTheSetting() {
        func error(_ adjust: (inout TLSConfiguration) -> Void) -> TLSError? {
            var settings = TLSConfiguration()
            settings.certificateFile = Self.files.cert
            settings.keyFile = Self.files.key
            adjust(&settings)
            do {
                _ = try TLSContext(settings)
                return nil
            } catch {
                return error
            }
        }
        #expect(error { _ in } == nil)
        #expect(error { $0.certificateFile = "/nonexistent.pem" }?.field == "tls.certificateFile")
        #expect(error { $0.keyFile = Self.files.cert }?.field == "tls.keyFile")
        #expect(error { $0.keyFile = nil }?.field == "tls.keyFile")
        #expect(error { $0.clientAuth = .required }?.field == "tls.clientCAFile")
        #expect(
            error {
                $0.clientCAFile = Self.files.key
                $0.clientAuth = .optional
            }?.field == "tls.clientCAFile")
    }
}

final class CapturingLogHandler: LogHandler {
    var lines: [String] = []
    func write(line: String) { lines.append(line) }
}
