import AdLoaderLogging
import AdLoaderTLS
import AdLoaderTestSupport
import AdLoaderUV
import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Fuzzes the TLS layer of the TCP listener (issue 28, AdLoaderTLS): a ``TLSAcceptor`` with a
/// certificate made by the `openssl` command at first use, on an in-memory stream, a manual
/// clock. The input is what a client sends, cut into chunks whose sizes come from its first bytes
/// (`[k] [k sizes] [bytes…]`, as `http2-session`); a handshake that completes hands on a
/// plaintext stream whose reader echoes what it reads. Nothing traps; everything the server wrote
/// is whole TLS records (content type 20…24, version 3.x, at most 2^14 + 2048 bytes each); once
/// the handshake timeout has passed no handshake is pending, and a stream that was not handed on
/// is closed. OpenSSL (the Debian library) is not instrumented: the fuzzer sees what the memory
/// BIOs, the handshake driver and the plaintext stream do with whatever OpenSSL answers.
public enum TLSSessionFuzz: FuzzTarget {
    public static let name = "tls-session"

    final class Echo: ByteStreamAcceptor {
        var accepted: [any ByteStream] = []
        func accept(_ stream: any ByteStream, peer: String) {
            accepted.append(stream)
            try? stream.readStart { [unowned stream] result in
                guard case .success(let bytes) = result else { return }
                _ = try? stream.tryWrite(bytes)
            }
        }
    }

    /// The certificate and key files, made once per process (nil when `openssl` failed).
    // nonisolated(unsafe): a fuzz process runs one input at a time on one thread.
    nonisolated(unsafe) static var files: (cert: String, key: String)?? = nil

    static func certificate() -> (cert: String, key: String)? {
        if let made = files { return made }
        let directory = "/tmp/adloader-tls-fuzz-\(getpid())"
        let cert = directory + "/server.pem"
        let key = directory + "/server.key"
        let command =
            "mkdir -p \(directory) && /usr/bin/openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            + "-keyout \(key) -out \(cert) -days 2 -subj /CN=fuzz 2>/dev/null"
        let made: (cert: String, key: String)? = system(command) == 0 ? (cert, key) : nil
        files = .some(made)
        return made
    }

    // nonisolated(unsafe): as `files`; one context for every input, as a server keeps one (loading
    // the key per input made the target run 63 inputs a second).
    nonisolated(unsafe) static var context: TLSContext?

    static func sharedContext() throws(FuzzFailure) -> TLSContext {
        if let context { return context }
        guard let (cert, key) = certificate() else { throw FuzzFailure("openssl could not make a certificate") }
        var settings = TLSConfiguration()
        settings.certificateFile = cert
        settings.keyFile = key
        do {
            let loaded = try TLSContext(settings)
            context = loaded
            return loaded
        } catch {
            throw FuzzFailure("the certificate made by openssl does not load: \(error)")
        }
    }

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let context = try sharedContext()
        let clock = ManualClock()
        let echo = Echo()
        let acceptor = TLSAcceptor(
            context: context, next: echo, clock: clock, scheduler: clock, handshakeTimeout: .seconds(10),
            maxPending: 4, logger: Logger(level: .error))
        let stream = InProcessStream()
        acceptor.accept(stream, peer: "fuzz")
        let bytes = Array(input)
        let k = Int(bytes.first ?? 0) % 8
        let sizes = bytes.dropFirst().prefix(k).map { Int($0) + 1 }
        var rest = bytes.dropFirst(1 + k)[...]
        var index = 0
        while !rest.isEmpty, !stream.isClosed {
            let size = sizes.isEmpty ? rest.count : sizes[index % sizes.count]
            index += 1
            stream.clientSends(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
            stream.clientReads()
            clock.advance(by: .milliseconds(1))
        }
        clock.advance(by: .seconds(11))
        stream.clientReads()
        try checkRecords(stream.takeReceived())
        guard acceptor.pendingCount == 0 else { throw FuzzFailure("a handshake still pending after its timeout") }
        if echo.accepted.isEmpty, !stream.isClosed {
            throw FuzzFailure("a stream neither handed on nor closed after the handshake timeout")
        }
        for accepted in echo.accepted { accepted.close() }
        stream.close()
        acceptor.closeAll()
    }

    /// Whole TLS records: type 20 (change cipher spec) … 24 (heartbeat), version 3.x, length
    /// at most 2^14 + 2048 (RFC 8446 5.2); or OpenSSL's fatal alert before any version was
    /// agreed (a ClientHello record of a version it cannot read), which carries that record's
    /// version back, whatever it was: type 21, 2 bytes.
    static func checkRecords(_ output: [UInt8]) throws(FuzzFailure) {
        var offset = 0
        while offset < output.count {
            guard offset + 5 <= output.count else { throw FuzzFailure("a partial record header at \(offset)") }
            let type = output[offset]
            let length = Int(output[offset + 3]) << 8 | Int(output[offset + 4])
            let earlyAlert = type == 21 && length == 2
            guard (20...24).contains(type), output[offset + 1] == 3 || earlyAlert, length <= 16_384 + 2_048 else {
                throw FuzzFailure("not a TLS record at \(offset): \(hex(output[offset...].prefix(8)))")
            }
            guard offset + 5 + length <= output.count else { throw FuzzFailure("a partial record at \(offset)") }
            offset += 5 + length
        }
    }

    /// The first flight of an OpenSSL client (a ClientHello), with `alpn` and protocol bounds.
    static func clientHello(alpn: [UInt8]?, maxVersion: Int32 = 0) -> [UInt8] {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return [] }
        defer { SSL_CTX_free(context) }
        if maxVersion != 0 { _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(maxVersion), nil) }
        if let alpn { _ = SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) }
        guard let ssl = SSL_new(context) else { return [] }
        defer { SSL_free(ssl) }
        let input = BIO_new(BIO_s_mem())
        let output = BIO_new(BIO_s_mem())
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        _ = SSL_do_handshake(ssl)
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
            if count <= 0 { break }
            result += chunk.prefix(Int(count))
        }
        return result
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let h2 = helloH2
        return [
            ("hello-h2", [0] + h2),
            ("hello-h2-chunked", [3, 4, 40, 250] + h2),
            ("hello-adloader", [0] + helloAdloader),
            ("hello-tls11-only", [0] + helloTLS11),
            ("hello-truncated", [0] + h2.prefix(60)),
            ("hello-twice", [0] + h2 + h2),
            ("http", [0] + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
            ("server-hello-from-client", [0, 0x16, 0x03, 0x01, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00]),
        ]
    }

    // ClientHellos an OpenSSL 3.0 client wrote (clientHello(alpn:maxVersion:)), kept as bytes: its
    // random and key share change every time, and the committed seeds must match these.
    static let helloH2: [UInt8] = bytes(
        "160301012d0100012903034d800e03842bb9066d3b5631b125d21156ac1c7d1f0fddf128f7f15183d68f4620b026614d71c7"
            + "bf62834a351c9a5164ae7a99398c8792e13a3c06cf998e610010003e130213031301c02cc030009fcca9cca8ccaac02bc02f"
            + "009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010000a2000b00040300"
            + "0102000a00160014001d0017001e001900180100010101020103010400230000001000050003026832001600000017000000"
            + "0d002a0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b000908"
            + "0304030303020301002d00020101003300260024001d00200ae7742bde38424fb68c950d2e2c783ab69ddb584f44a6bb3fa3"
            + "d366a8ea9e74")
    static let helloAdloader: [UInt8] = bytes(
        "1603010124010001200303530798c115fa37c496ce32d24368bb364dd96fab47cf0370340c69a7b0a41c5c20a90ceaf8449c"
            + "96e151aa7b40e18e69517cfd57fe1f9715a119860d0118dc512f003e130213031301c02cc030009fcca9cca8ccaac02bc02f"
            + "009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff01000099000b00040300"
            + "0102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a002804030503"
            + "0603080708080809080a080b080408050806040105010601030303010302040205020602002b000908030403030302030100"
            + "2d00020101003300260024001d0020b4cf5e5644e53ff114e479a1db4fb40809e133244dbe9a741d2e486a87685135")
    static let helloTLS11: [UInt8] = bytes(
        "16030100630100005f03021b9b20621953b009c1dbe3baeb2b0e8d03e0c064eac7c7e5357dc12a04c3dfe9000012c00ac014"
            + "0039c009c01300330035002f00ff01000024000b000403000102000a000c000a001d0017001e001900180023000000160000"
            + "00170000")

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v = c <= 57 ? c - 48 : c - 87
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }
}
