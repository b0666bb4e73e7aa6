internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// One client-side TLS session (OpenSSL on memory BIOs) over a connected blocking socket.
///
/// The handshake runs in ``init(fd:options:host:)`` on the caller's thread. Afterwards the
/// connection's writers ``seal(_:)`` plaintext into records under the connection's write lock
/// and send them in that order; its reader thread ``open(_:into:)``s what it received. OpenSSL
/// allows one thread at a time on an `SSL`: every use is under `lock`.
///
/// `@unchecked Sendable`: `ssl`, `context` and the BIOs are only touched under `lock` (or in
/// `init`/`deinit`, when no other thread holds the session).
final class TLSClientSession: @unchecked Sendable {
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    /// Ciphertext from the server, read by OpenSSL (owned by `ssl`).
    private let input: OpaquePointer
    /// Ciphertext OpenSSL wrote for the server (owned by `ssl`).
    private let output: OpaquePointer
    private let lock = Locked(())

    /// What ``open(_:into:)`` made of the bytes it was given.
    enum Received: Equatable {
        /// All plaintext handed on; `reply` when OpenSSL has records to send back (send them
        /// with ``takeOutput()`` under the write lock).
        case more(reply: Bool)
        /// The server closed the TLS session (close_notify).
        case closed
        /// A TLS error (an alert from the server, a bad record); the connection is unusable.
        case failed(String)
    }

    /// Builds the context, connects the session and completes the handshake on `fd`.
    /// - Throws: ``AdLoaderClientError`` `.tlsFailed` naming the file, the verification
    ///   failure or the alert; the socket stays open (the caller closes it).
    init(fd: Int32, options: ClientTLS, host: String) throws(AdLoaderClientError) {
        _ = COpenSSL_init_without_atexit()  // no cleanup at exit under running threads (shim.h)
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw Self.failure("cannot create a TLS context: \(Self.takeError())")
        }
        guard COpenSSL_client_ctx_harden(context) == 1 else {
            SSL_CTX_free(context)
            throw Self.failure("cannot set the TLS 1.2 minimum: \(Self.takeError())")
        }
        do throws(AdLoaderClientError) {
            try Self.configure(context, options)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        let ssl = SSL_new(context)
        let input = BIO_new(BIO_s_mem())
        let output = BIO_new(BIO_s_mem())
        guard let ssl, let input, let output else {
            let reason = Self.takeError()
            if let ssl { SSL_free(ssl) }
            if let input { BIO_free(input) }
            if let output { BIO_free(output) }
            SSL_CTX_free(context)
            throw Self.failure("cannot create a TLS session: \(reason)")
        }
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        self.context = context
        self.ssl = ssl
        self.input = input
        self.output = output
        let name = options.serverName ?? host
        guard COpenSSL_expect_peer_name(ssl, name) == 1 else {
            throw Self.failure("cannot check the server name \"\(name)\": \(Self.takeError())")
        }
        let protocols: [UInt8] = [10] + Array("adloader/1".utf8)
        guard SSL_set_alpn_protos(ssl, protocols, UInt32(protocols.count)) == 0 else {
            throw Self.failure("cannot offer ALPN: \(Self.takeError())")
        }
        try handshake(fd: fd, serverName: name)
    }

    deinit {
        SSL_free(ssl)  // frees both BIOs
        SSL_CTX_free(context)
    }

    private static func configure(_ context: OpaquePointer, _ options: ClientTLS) throws(AdLoaderClientError) {
        if let ca = options.caFile {
            try readable(ca, what: "CA file")
            guard SSL_CTX_load_verify_locations(context, ca, nil) == 1 else {
                throw failure("\(ca) holds no PEM CA certificate: \(takeError())")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw failure("cannot load the system's trust store: \(takeError())")
        }
        switch (options.certificateFile, options.keyFile) {
        case (nil, nil): break
        case (let certificate?, let key?):
            try readable(certificate, what: "client certificate")
            try readable(key, what: "client key")
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw failure("\(certificate) is not a PEM certificate chain: \(takeError())")
            }
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
                SSL_CTX_check_private_key(context) == 1
            else {
                throw failure("\(key) is not the PEM private key of \(certificate): \(takeError())")
            }
        case (nil, _?): throw failure("a client key needs its certificate (certificate file not given)")
        case (_?, nil): throw failure("a client certificate needs its key (key file not given)")
        }
    }

    private func handshake(fd: Int32, serverName: String) throws(AdLoaderClientError) {
        var timeout = timeval(tv_sec: ClientTLS.handshakeTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var none = timeval(tv_sec: 0, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }
        let capacity = 16 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let result = SSL_do_handshake(ssl)
            // What OpenSSL wrote (the ClientHello, Finished, an alert) goes out first.
            let records = takeOutput()
            if !records.isEmpty, !records.withUnsafeBytes({ Socket.sendAll(fd, $0) }) {
                throw Self.failure("connection lost during the TLS handshake: \(Self.errorText(errno))")
            }
            if result == 1 { return }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ else {
                let verify = SSL_get_verify_result(ssl)
                if verify != Int(X509_V_OK) {
                    let reason = String(cString: X509_verify_cert_error_string(verify))
                    throw Self.failure(
                        "the server's certificate is not accepted for \(serverName): \(reason) (verify error \(verify))"
                    )
                }
                throw Self.failure("TLS handshake failed: \(Self.takeError())")
            }
            let n = recv(fd, buffer.baseAddress, capacity, 0)
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw Self.failure("TLS handshake timed out after \(ClientTLS.handshakeTimeoutSeconds) s")
            }
            if n <= 0 {
                throw Self.failure(
                    n == 0
                        ? "the server closed the connection during the TLS handshake (is TLS on at the server?)"
                        : "connection error during the TLS handshake: \(Self.errorText(errno))")
            }
            _ = BIO_write(input, buffer.baseAddress, Int32(n))
        }
    }

    /// Encrypts `plaintext` into records; nil when the session failed. Call under the
    /// connection's write lock and send the bytes before releasing it (records go in order).
    func seal(_ plaintext: [UInt8]) -> [UInt8]? {
        lock.withLock { _ in
            var offset = 0
            while offset < plaintext.count {
                let chunk = Int32(min(plaintext.count - offset, 1 << 20))
                let written = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, chunk) }
                guard written > 0 else { return nil }
                offset += Int(written)
            }
            return drainOutput()
        }
    }

    /// Records OpenSSL has written and not yet sent (a reply while reading). Under the write lock.
    func takeOutput() -> [UInt8] {
        lock.withLock { _ in drainOutput() }
    }

    /// Decrypts `ciphertext`, handing every plaintext piece to `body` (on the caller's thread,
    /// under the session's lock: `body` must not use the session).
    func open(_ ciphertext: UnsafeRawBufferPointer, into body: (UnsafeRawBufferPointer) -> Void) -> Received {
        lock.withLock { _ in
            if !ciphertext.isEmpty { _ = BIO_write(input, ciphertext.baseAddress, Int32(ciphertext.count)) }
            let capacity = 16 * 1024
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let n = SSL_read(ssl, buffer.baseAddress, Int32(capacity))
                if n > 0 {
                    body(UnsafeRawBufferPointer(rebasing: buffer[0..<Int(n)]))
                    continue
                }
                switch SSL_get_error(ssl, n) {
                case SSL_ERROR_WANT_READ: return .more(reply: BIO_ctrl_pending(output) > 0)
                case SSL_ERROR_ZERO_RETURN: return .closed
                default: return .failed(Self.takeError())
                }
            }
        }
    }

    /// Everything in the output BIO. Under `lock`.
    private func drainOutput() -> [UInt8] {
        let pending = BIO_ctrl_pending(output)
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(pending))
        let count = bytes.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        if count < Int32(pending) { bytes.removeLast(Int(pending) - Int(max(count, 0))) }
        return bytes
    }

    private static func readable(_ path: String, what: String) throws(AdLoaderClientError) {
        let fd = Glibc.open(path, O_RDONLY)
        guard fd >= 0 else { throw failure("cannot read the \(what) \(path): \(errorText(errno))") }
        close(fd)
    }

    private static func failure(_ message: String) -> AdLoaderClientError {
        AdLoaderClientError(code: .tlsFailed, message: message)
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The oldest queued OpenSSL error as text, the queue emptied.
    static func takeError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = COpenSSL_take_error(&buffer, buffer.count)
        if code == 0 { return "no OpenSSL error" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
