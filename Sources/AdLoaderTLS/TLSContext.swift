internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// One OpenSSL server context (`SSL_CTX`): certificate, key, protocol floor, ALPN and client
/// verification, built from a ``TLSConfiguration``. Each connection's `SSL` holds its own
/// reference, so replacing the context (a reload) leaves open connections as they are.
///
/// - Important: loop-confined.
public final class TLSContext {
    let pointer: OpaquePointer
    /// Whether client certificates are asked for.
    public let clientAuth: TLSConfiguration.ClientAuth

    /// Reads the files and builds the context.
    /// - Throws: ``TLSError`` naming the setting whose file is missing, unreadable, not PEM, or
    ///   (for the key) not the certificate's.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        try configuration.validate()
        guard let certificate = configuration.certificateFile, let key = configuration.keyFile else {
            throw TLSError(field: "tls.certificateFile", message: "is not set")
        }
        for (field, path) in [("tls.certificateFile", certificate), ("tls.keyFile", key)]
            + (configuration.clientCAFile.map { [("tls.clientCAFile", $0)] } ?? [])
        {
            try Self.checkReadable(path, field: field)
        }
        _ = COpenSSL_init_without_atexit()  // no cleanup at exit under running threads (shim.h)
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError(field: "tls", message: "SSL_CTX_new failed: \(Self.takeError())")
        }
        pointer = context
        clientAuth = configuration.clientAuth
        guard COpenSSL_ctx_harden(context) == 1 else {
            throw TLSError(field: "tls", message: "cannot set the TLS 1.2 minimum: \(Self.takeError())")
        }
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw TLSError(
                field: "tls.certificateFile",
                message: "\(certificate) is not a PEM certificate chain: \(Self.takeError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            let reason = Self.takeError()
            // OpenSSL checks the key against the certificate as it loads it.
            if reason.contains("key values mismatch") {
                throw TLSError(
                    field: "tls.keyFile", message: "\(key) does not match the certificate in \(certificate): \(reason)")
            }
            throw TLSError(field: "tls.keyFile", message: "\(key) is not a PEM private key: \(reason)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError(
                field: "tls.keyFile",
                message: "\(key) does not match the certificate in \(certificate): \(Self.takeError())")
        }
        COpenSSL_ctx_enable_alpn(context)
        // Session resumption with client verification needs an id context.
        let sessionContext = Array("adloaderd".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        if let ca = configuration.clientCAFile, configuration.clientAuth != .none {
            guard SSL_CTX_load_verify_locations(context, ca, nil) == 1, let names = SSL_load_client_CA_file(ca) else {
                throw TLSError(
                    field: "tls.clientCAFile", message: "\(ca) holds no PEM CA certificate: \(Self.takeError())")
            }
            SSL_CTX_set_client_CA_list(context, names)
            COpenSSL_ctx_verify_clients(context, configuration.clientAuth == .required ? 1 : 0)
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// A new server-side connection state, or nil when OpenSSL cannot allocate one.
    func makeConnection() -> OpaquePointer? {
        guard let ssl = SSL_new(pointer) else { return nil }
        SSL_set_accept_state(ssl)
        return ssl
    }

    /// A clear error naming `field` when `path` cannot be opened (the server's and the Redis
    /// client's files alike), before OpenSSL gives its own less readable one.
    static func checkReadable(_ path: String, field: String) throws(TLSError) {
        let fd = open(path, O_RDONLY)
        if fd < 0 {
            throw TLSError(field: field, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
    }

    /// The oldest queued OpenSSL error as text, the queue emptied.
    static func takeError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = COpenSSL_take_error(&buffer, buffer.count)
        if code == 0 { return "no OpenSSL error" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
