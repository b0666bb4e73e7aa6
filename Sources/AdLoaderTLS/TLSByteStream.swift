public import AdLoaderUV
internal import COpenSSL

/// A byte stream that speaks TLS over another (a TCP connection): OpenSSL works on two memory
/// BIOs, so every byte still moves through the base stream's libuv reads and writes and the
/// transports above see the plaintext through the same ``ByteStream`` they use for TCP.
///
/// ``TLSAcceptor`` makes one per accepted connection and runs its handshake; once it completes,
/// the stream is handed to the next acceptor (the protocol sniffer).
///
/// - Important: loop-confined. Read chunks are valid only during the read action, as with
///   ``UVStream``.
public final class TLSByteStream: ByteStream {
    enum State { case handshaking, open, failed, closed }

    private let base: any ByteStream
    private let ssl: OpaquePointer
    /// Ciphertext from the peer, read by OpenSSL.
    private let input: OpaquePointer
    /// Ciphertext OpenSSL produced, written to the base stream.
    private let output: OpaquePointer
    private let buffers: TLSBuffers
    private let scheduler: any TLSDeferral
    private(set) var state = State.handshaking
    private var onRead: ((Result<UnsafeRawBufferPointer, UVError>) -> Void)?
    private var onHandshake: ((Result<Void, TLSHandshakeFailure>) -> Void)?
    /// The reader wants bytes (between ``readStart(_:)``/``resumeReading()`` and ``readStop()``).
    private var isReading = false
    private var isPumping = false
    /// Inside ``resumeReading()``: a base stream that delivers at once (an in-process one) must
    /// not re-enter the reader from its own call.
    private var isResuming = false
    private var pumpScheduled = false
    /// The base stream ended (or failed): delivered after the plaintext before it.
    private var baseEnd: UVError?
    private var deliveredEnd = false
    private var receivedCloseNotify = false
    /// The handshake takes the peer's records one per loop pass (a client's: the server's
    /// flight, whose certificate chain check and signature cost ~0.7 ms in one piece with
    /// OpenSSL 3.0 here, so no single pass of the loop holds it that long).
    private let stepwise: Bool
    /// Stepwise: the peer's bytes not yet given to OpenSSL.
    private var handshakeInput: [UInt8] = []
    private var feedScheduled = false

    /// The client certificate's subject (RFC 2253), when one was presented and verified.
    public private(set) var peerSubject: String?
    /// The protocol agreed by ALPN ("h2", "adloader/1"), nil when none.
    public private(set) var applicationProtocol: String?
    /// "TLSv1.3", "TLSv1.2".
    public private(set) var protocolVersion = ""
    public private(set) var cipher = ""
    /// Given, at close, the session of a stream that can resume it (a client's: a retained
    /// `SSL_SESSION` the receiver frees); the next connection to the same server offers it.
    var keepSession: ((OpaquePointer) -> Void)?

    /// Whether the handshake resumed an earlier session (no certificate exchanged).
    public var isResumed: Bool { SSL_session_reused(ssl) == 1 }

    /// nil when OpenSSL cannot allocate the BIOs (`ssl` is then freed).
    /// - Parameter stepwise: the handshake takes one record of the peer's per loop pass.
    init?(
        base: any ByteStream, ssl: OpaquePointer, buffers: TLSBuffers, scheduler: any TLSDeferral,
        stepwise: Bool = false
    ) {
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            return nil
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            return nil
        }
        self.base = base
        self.ssl = ssl
        self.stepwise = stepwise
        self.buffers = buffers
        self.scheduler = scheduler
        self.input = input
        self.output = output
        // The SSL owns both BIOs from here on (SSL_free frees them).
        SSL_set_bio(ssl, input, output)
    }

    deinit { SSL_free(ssl) }

    // MARK: Handshake

    /// Starts reading the base stream and runs the handshake: a server answers the client's
    /// hello, a client (``TLSClientContext``) sends its own at once; `completion` runs once.
    func startHandshake(_ completion: @escaping (Result<Void, TLSHandshakeFailure>) -> Void) {
        onHandshake = completion
        do {
            try base.readStart { [weak self] result in self?.baseRead(result) }
        } catch {
            failHandshake(TLSHandshakeFailure(kind: .io, reason: "cannot read: \(error)"))
            return
        }
        if SSL_is_server(ssl) == 0 { advanceHandshake() }
    }

    /// Ends a handshake that took too long.
    func abandonHandshake(reason: TLSHandshakeFailure) {
        guard state == .handshaking else { return }
        failHandshake(reason)
    }

    private func advanceHandshake() {
        let result = SSL_do_handshake(ssl)
        let error = result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, result)
        _ = flushOutput()
        if result == 1 {
            state = .open
            if !handshakeInput.isEmpty {
                // Records after the handshake's last (application data): OpenSSL reads them now.
                handshakeInput.withUnsafeBytes { _ = BIO_write(input, $0.baseAddress, Int32($0.count)) }
                handshakeInput = []
            }
            readSessionFacts()
            let completion = onHandshake
            onHandshake = nil
            completion?(.success(()))
            // Application data that came with the handshake's last flight.
            pump()
            return
        }
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
            if let end = baseEnd, Self.recordLength(handshakeInput) == nil {
                failHandshake(
                    TLSHandshakeFailure(kind: .io, reason: end.isEndOfFile ? "closed during the handshake" : "\(end)"))
            }
            return
        }
        let verify = SSL_get_verify_result(ssl)
        var reason = TLSContext.takeError()
        if verify != Int(X509_V_OK) {
            reason += " (certificate: \(String(cString: X509_verify_cert_error_string(Int(verify)))))"
        }
        failHandshake(TLSHandshakeFailure(kind: .protocolError, reason: reason))
    }

    private func failHandshake(_ failure: TLSHandshakeFailure) {
        state = .failed
        // The alert OpenSSL wrote (unknown CA, certificate required, protocol version...) goes
        // out before the close, so the client reads why.
        _ = flushOutput()
        let completion = onHandshake
        onHandshake = nil
        completion?(.failure(failure))
        close()
    }

    private func readSessionFacts() {
        protocolVersion = String(cString: SSL_get_version(ssl))
        if let name = COpenSSL_cipher_name(ssl) { cipher = String(cString: name) }
        var alpn: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        if let alpn, alpnLength > 0 {
            applicationProtocol = String(
                decoding: UnsafeBufferPointer(start: alpn, count: Int(alpnLength)), as: UTF8.self)
        }
        if SSL_get_verify_result(ssl) == Int(X509_V_OK) {
            var subject = [CChar](repeating: 0, count: 257)
            let length = COpenSSL_peer_subject(ssl, &subject, Int32(subject.count))
            if length >= 0 {
                peerSubject = String(decoding: subject.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
    }

    // MARK: Reading

    private func baseRead(_ result: Result<UnsafeRawBufferPointer, UVError>) {
        switch result {
        case .success(let bytes):
            guard state == .handshaking || state == .open, let start = bytes.baseAddress else { return }
            if stepwise && state == .handshaking {
                handshakeInput += bytes
            } else {
                // A memory BIO grows to take every byte.
                _ = BIO_write(input, start, Int32(bytes.count))
            }
        case .failure(let error):
            if baseEnd == nil { baseEnd = error }
        }
        switch state {
        case .handshaking: if stepwise { feedRecord() } else { advanceHandshake() }
        case .open: if isResuming { schedulePump() } else { pump() }
        case .failed, .closed: break
        }
    }

    /// Stepwise handshake: gives OpenSSL the next whole record and advances; the one after it
    /// waits for the next loop pass. Without a whole record, waits for bytes (or fails on the
    /// stream's end).
    private func feedRecord() {
        guard state == .handshaking else { return }
        guard let length = Self.recordLength(handshakeInput) else {
            if baseEnd != nil { advanceHandshake() }
            return
        }
        handshakeInput.withUnsafeBytes { _ = BIO_write(input, $0.baseAddress, Int32(length)) }
        handshakeInput.removeFirst(length)
        advanceHandshake()
        guard state == .handshaking, Self.recordLength(handshakeInput) != nil || baseEnd != nil, !feedScheduled
        else { return }
        feedScheduled = true
        scheduler.defer { [weak self] in
            guard let self else { return }
            self.feedScheduled = false
            self.feedRecord()
        }
    }

    /// How many of `bytes` OpenSSL takes next: the TLS record at their start (5-byte header:
    /// type, version, 16-bit length) once all of it is there; all of them when they do not
    /// start like a record (a plaintext answer, a length beyond TLS' maximum: OpenSSL fails
    /// with its reason at once); nil: wait for more.
    private static func recordLength(_ bytes: [UInt8]) -> Int? {
        guard let type = bytes.first else { return nil }
        if !(20...24).contains(type) || (bytes.count >= 2 && bytes[1] != 3) { return bytes.count }
        guard bytes.count >= 5 else { return nil }
        let length = 5 + (Int(bytes[3]) << 8 | Int(bytes[4]))
        if length > 5 + 16_384 + 2_048 { return bytes.count }
        return bytes.count >= length ? length : nil
    }

    /// Delivers the plaintext OpenSSL has, then the end of the stream, while the reader reads.
    private func pump() {
        guard state == .open, !isPumping else { return }
        isPumping = true
        defer { isPumping = false }
        let buffer = buffers.read
        while state == .open, isReading, let onRead, !deliveredEnd {
            let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            if count > 0 {
                onRead(.success(UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(count))))
                continue
            }
            let error = SSL_get_error(ssl, count)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                guard let end = baseEnd else { break }
                deliveredEnd = true
                onRead(.failure(end))
            } else if error == SSL_ERROR_ZERO_RETURN {
                receivedCloseNotify = true
                deliveredEnd = true
                onRead(.failure(UVError(code: UVError.endOfFileCode, operation: "TLS close_notify")))
            } else {
                deliveredEnd = true
                onRead(.failure(UVError(code: UVError.protocolErrorCode, operation: "TLS: \(TLSContext.takeError())")))
            }
            break
        }
        // Reads can produce output too (a key update's answer).
        _ = flushOutput()
    }

    /// Runs ``pump()`` from the loop, not inside the caller's own call (a reader that starts or
    /// resumes reading must not be re-entered before it returns).
    private func schedulePump() {
        guard !pumpScheduled, state == .open else { return }
        pumpScheduled = true
        scheduler.defer { [weak self] in
            guard let self else { return }
            self.pumpScheduled = false
            self.pump()
        }
    }

    private var hasBufferedInput: Bool { SSL_pending(ssl) > 0 || BIO_ctrl_pending(input) > 0 }

    public var queuedWriteBytes: Int { base.queuedWriteBytes }
    public var sawEndOfFile: Bool { receivedCloseNotify || base.sawEndOfFile }
    public var hasUnreadInput: Bool { state == .open && (hasBufferedInput || base.hasUnreadInput) }

    public func readStart(_ action: @escaping (Result<UnsafeRawBufferPointer, UVError>) -> Void) throws(UVError) {
        onRead = action
        try resumeReading()
    }

    public func resumeReading() throws(UVError) {
        guard state == .open else { return }
        isReading = true
        isResuming = true
        defer { isResuming = false }
        try base.resumeReading()
        if isPumping { return }  // the pump under way goes on with this reader
        if hasBufferedInput || baseEnd != nil { schedulePump() }
    }

    public func readStop() {
        isReading = false
        base.readStop()
    }

    // MARK: Writing

    /// Encrypts all of `bytes` into the output BIO.
    private func encrypt(_ bytes: UnsafeRawBufferPointer) throws(UVError) {
        guard state == .open else { throw UVError(code: UVError.brokenPipeCode, operation: "TLS write after close") }
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let chunk = Int32(clamping: bytes.count - offset)
            let written = SSL_write(ssl, start + offset, chunk)
            if written <= 0 {
                throw UVError(code: UVError.protocolErrorCode, operation: "TLS write: \(TLSContext.takeError())")
            }
            offset += Int(written)
        }
    }

    /// Writes what OpenSSL produced: what the base takes now, the rest queued.
    @discardableResult
    private func flushOutput() -> UVError? {
        // A reader that closed the stream inside its read action: nothing more goes out.
        guard state != .closed else { return nil }
        let buffer = buffers.write
        while BIO_ctrl_pending(output) > 0 {
            let count = BIO_read(output, buffer.baseAddress, Int32(buffer.count))
            guard count > 0 else { break }
            let chunk = UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(count))
            if let error = base.writeNowOrQueue(chunk, makeCompletion: { { _ in } }) { return error }
        }
        return nil
    }

    /// Encrypts `bytes` and writes the records; always takes every byte (the base stream
    /// queues what the socket does not take, and ``queuedWriteBytes`` shows it).
    public func tryWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) -> Int {
        try encrypt(bytes)
        if let error = flushOutput() { throw error }
        return bytes.count
    }

    public func write(copying bytes: UnsafeRawBufferPointer, _ completion: @escaping (UVError?) -> Void) throws(UVError)
    {
        try encrypt(bytes)
        // One queued write carries the completion, after every record before it.
        let pending = BIO_ctrl_pending(output)
        guard pending > 0 else { return }
        var records = [UInt8](repeating: 0, count: Int(pending))
        let count = records.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        let error: UVError? = records.withUnsafeBytes { all in
            do throws(UVError) {
                try base.write(copying: UnsafeRawBufferPointer(rebasing: all[..<Int(max(count, 0))]), completion)
                return nil
            } catch {
                return error
            }
        }
        if let error { throw error }
    }

    /// Sends close_notify (when the session is open) and closes the base stream.
    public func close() {
        guard state != .closed else { return }
        if state == .open {
            if let keepSession, let session = SSL_get1_session(ssl) {
                // TLS 1.3's tickets arrive after the handshake: resumable once one was read.
                if SSL_SESSION_is_resumable(session) == 1 { keepSession(session) } else { SSL_SESSION_free(session) }
            }
            _ = SSL_shutdown(ssl)
            _ = flushOutput()
        }
        keepSession = nil
        state = .closed
        onRead = nil
        onHandshake = nil
        scheduler.streamClosed()
        base.close()
    }
}

/// Why a handshake did not complete.
public struct TLSHandshakeFailure: Error, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The peer's certificate was not accepted, an alert came, the bytes were not TLS.
        case protocolError = "protocol"
        case io, timeout
    }
    public let kind: Kind
    /// OpenSSL's reason, with the certificate verification's when that failed.
    public let reason: String

    public var description: String { reason }
}

/// The read and write buffers every TLS stream of one acceptor (or one client context) shares:
/// a stream uses the read buffer only inside its pump, which runs from its own base stream's
/// read or its own deferral, never inside another stream's; the write buffer only inside a
/// flush, which calls out to nothing but the base stream's write.
final class TLSBuffers {
    let read: UnsafeMutableRawBufferPointer
    let write: UnsafeMutableRawBufferPointer

    init() {
        read = .allocate(byteCount: 64 * 1024, alignment: 16)
        write = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        read.deallocate()
        write.deallocate()
    }
}

/// Runs work on the loop soon, after the current call returns.
protocol TLSDeferral: AnyObject {
    func `defer`(_ action: @escaping () -> Void)
    /// The stream closed: nothing deferred for it runs any more (a client's own timer closes).
    func streamClosed()
}

extension TLSDeferral {
    func streamClosed() {}
}
