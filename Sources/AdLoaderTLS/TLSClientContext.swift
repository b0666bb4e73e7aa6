public import AdLoaderUV
internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// TLS for a connection the daemon makes (to Redis): the server's certificate verified
/// against ``caFile`` (else the system's trust store) and its name, optionally a client
/// certificate for servers that ask for one (mutual TLS).
public struct TLSClientConfiguration: Hashable, Sendable {
    /// PEM CA certificates the server's certificate must chain to; nil: the system's trust store.
    public var caFile: String?
    /// PEM certificate chain presented to a server that asks for one; needs ``keyFile``.
    public var certificateFile: String?
    /// PEM private key of ``certificateFile``.
    public var keyFile: String?
    /// The name the server's certificate must carry (DNS name, or an IP address in its subject
    /// alternative names), also sent as SNI; nil: the host connected to.
    public var serverName: String?

    public init(
        caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, serverName: String? = nil
    ) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.serverName = serverName
    }
}

/// One OpenSSL client context (`SSL_CTX`) built from a ``TLSClientConfiguration``: the files
/// are read once, here; every connection made with ``connect(over:host:port:loop:_:)`` shares it.
///
/// The handshake runs on the loop like the server's (``TLSByteStream`` over memory BIOs):
/// every byte moves through the TCP stream's libuv reads and writes, nothing waits. The
/// server's records are taken one per loop pass, and a reconnect resumes the last session of
/// the same server, so that no pass of the loop holds a whole handshake's work.
/// TLS 1.2 is the minimum, 1.3 is preferred; no renegotiation, no compression.
///
/// - Important: loop-confined (the read and write buffers are shared by its connections, which
///   use them only inside one call).
public final class TLSClientContext {
    let pointer: OpaquePointer
    public let configuration: TLSClientConfiguration
    private let buffers = TLSBuffers()
    /// The last resumable session of each server (`host:port name`), offered at its next
    /// connect: a reconnect skips the certificate (its decoding and chain check are the
    /// handshake's costliest step on the loop). A server that no longer knows it (restarted)
    /// answers with a full handshake.
    private var sessions: [String: OpaquePointer] = [:]

    /// Reads the files and builds the context.
    /// - Throws: ``TLSError`` whose field is `caFile`, `certificateFile` or `keyFile`: a file
    ///   missing or unreadable, not PEM, a key that is not the certificate's, a certificate
    ///   without its key or a key without its certificate.
    public init(_ configuration: TLSClientConfiguration) throws(TLSError) {
        switch (configuration.certificateFile, configuration.keyFile) {
        case (nil, nil), (_?, _?): break
        case (nil, _?): throw TLSError(field: "certificateFile", message: "is required with keyFile")
        case (_?, nil): throw TLSError(field: "keyFile", message: "is required with certificateFile")
        }
        for (field, path) in [
            ("caFile", configuration.caFile), ("certificateFile", configuration.certificateFile),
            ("keyFile", configuration.keyFile),
        ] {
            if let path { try TLSContext.checkReadable(path, field: field) }
        }
        _ = COpenSSL_init_without_atexit()  // no cleanup at exit under running threads (shim.h)
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError(field: "tls", message: "SSL_CTX_new failed: \(TLSContext.takeError())")
        }
        pointer = context
        self.configuration = configuration
        guard COpenSSL_client_ctx_harden(context) == 1 else {
            throw TLSError(field: "tls", message: "cannot set the TLS 1.2 minimum: \(TLSContext.takeError())")
        }
        if let ca = configuration.caFile {
            guard SSL_CTX_load_verify_locations(context, ca, nil) == 1 else {
                throw TLSError(field: "caFile", message: "\(ca) holds no PEM CA certificate: \(TLSContext.takeError())")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw TLSError(field: "caFile", message: "cannot load the system's trust store: \(TLSContext.takeError())")
        }
        if let certificate = configuration.certificateFile, let key = configuration.keyFile {
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw TLSError(
                    field: "certificateFile",
                    message: "\(certificate) is not a PEM certificate chain: \(TLSContext.takeError())")
            }
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
                SSL_CTX_check_private_key(context) == 1
            else {
                throw TLSError(
                    field: "keyFile",
                    message: "\(key) is not the PEM private key of \(certificate): \(TLSContext.takeError())")
            }
        }
    }

    deinit {
        for session in sessions.values { SSL_SESSION_free(session) }
        SSL_CTX_free(pointer)
    }

    /// Starts a client handshake over `base`, a connected stream: the ClientHello goes out now,
    /// the rest as the server's bytes arrive. `completion` runs once, on the loop, unless the
    /// stream is closed first (a caller's own timeout closes it: the handshake has none).
    /// On failure the stream (and `base`) is already closed.
    /// The session of the last connection to the same server (closed after it received one) is
    /// offered for resumption.
    /// - Parameters:
    ///   - host: the host connected to: the name the certificate must carry unless
    ///     ``TLSClientConfiguration/serverName`` is set.
    ///   - port: with `host`, which server's session to offer.
    ///   - loop: where the stream defers work (a one-shot timer, closed with the stream).
    /// - Returns: the stream, plaintext once `completion` reported success.
    /// - Throws: ``TLSHandshakeFailure`` when the session cannot be set up (`base` is not closed).
    public func connect(
        over base: any ByteStream, host: String, port: Int, loop: UVLoop,
        _ completion: @escaping (Result<Void, TLSHandshakeFailure>) -> Void
    ) throws(TLSHandshakeFailure) -> TLSByteStream {
        guard let ssl = SSL_new(pointer) else {
            throw TLSHandshakeFailure(kind: .io, reason: "cannot start a TLS session: \(TLSContext.takeError())")
        }
        SSL_set_connect_state(ssl)
        let name = configuration.serverName ?? host
        guard COpenSSL_expect_peer_name(ssl, name) == 1 else {
            SSL_free(ssl)
            throw TLSHandshakeFailure(
                kind: .io, reason: "cannot check the server name \"\(name)\": \(TLSContext.takeError())")
        }
        let key = "\(host):\(port) \(name)"
        if let session = sessions[key] { _ = SSL_set_session(ssl, session) }
        guard
            let stream = TLSByteStream(
                base: base, ssl: ssl, buffers: buffers, scheduler: LoopDeferral(loop: loop), stepwise: true)
        else {
            throw TLSHandshakeFailure(kind: .io, reason: "cannot start a TLS session: out of memory")
        }
        stream.keepSession = { [weak self] session in
            guard let self else { return SSL_SESSION_free(session) }
            if let old = self.sessions.updateValue(session, forKey: key) { SSL_SESSION_free(old) }
        }
        stream.startHandshake(completion)
        return stream
    }
}

/// ``TLSDeferral`` for one client stream: a one-shot timer due now, made at the first use and
/// closed with the stream.
final class LoopDeferral: TLSDeferral {
    private let loop: UVLoop
    private var timer: UVTimer?
    private var actions: [() -> Void] = []

    init(loop: UVLoop) { self.loop = loop }

    func `defer`(_ action: @escaping () -> Void) {
        if timer == nil { timer = try? UVTimer(loop: loop) }
        guard let timer else { return }
        actions.append(action)
        // 1 ms, not 0: libuv 1.44 runs a 0 ms timer re-armed in its own callback in the same pass.
        timer.start(timeout: 1) { [unowned self] in
            let due = self.actions
            self.actions = []
            for action in due { action() }
        }
    }

    func streamClosed() {
        actions = []
        timer?.close()
        timer = nil
    }
}
