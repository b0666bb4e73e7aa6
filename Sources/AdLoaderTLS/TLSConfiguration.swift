/// TLS on the TCP listener: the server's certificate and key, and optionally client
/// certificates checked against a CA (mutual TLS).
///
/// Off while ``certificateFile`` is nil. The files are read at start and at every reload
/// (SIGHUP, the Reload call): new handshakes use what the last successful read gave, open
/// connections keep the certificate they were made with.
public struct TLSConfiguration: Hashable, Sendable {
    /// Whether, and how strictly, clients present certificates.
    public enum ClientAuth: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// No client certificate is asked for.
        case none
        /// Asked for and checked against ``TLSConfiguration/clientCAFile`` when sent; a client
        /// without one still connects.
        case optional
        /// A client without a certificate the CA signed is refused at the handshake.
        case required

        public var description: String { rawValue }
    }

    /// PEM certificate chain (the server's certificate first); nil: TLS off.
    public var certificateFile: String? = nil
    /// PEM private key of the certificate.
    public var keyFile: String? = nil
    /// PEM CA certificates client certificates must chain to.
    public var clientCAFile: String? = nil
    public var clientAuth = ClientAuth.none
    /// From accept to the end of the handshake; slower clients are closed.
    public var handshakeTimeout: Duration = .seconds(10)

    public init() {}

    /// Whether TLS is on.
    public var isEnabled: Bool { certificateFile != nil }

    /// Checks that the settings fit together (not the files: ``TLSContext`` reads those).
    /// - Throws: ``TLSError`` naming the setting.
    public func validate() throws(TLSError) {
        if certificateFile != nil, keyFile == nil {
            throw TLSError(field: "tls.keyFile", message: "is required with tls.certificateFile")
        }
        if certificateFile == nil, keyFile != nil || clientCAFile != nil || clientAuth != .none {
            throw TLSError(
                field: "tls.certificateFile", message: "is required by the other tls settings (TLS is off without it)")
        }
        if clientAuth != .none, clientCAFile == nil {
            throw TLSError(field: "tls.clientCAFile", message: "is required with tls.clientAuth \(clientAuth)")
        }
        if clientAuth == .none, clientCAFile != nil {
            throw TLSError(
                field: "tls.clientAuth", message: "must be optional or required when tls.clientCAFile is set")
        }
        if handshakeTimeout <= .zero {
            throw TLSError(field: "tls.handshakeTimeout", message: "must be positive")
        }
    }
}

/// A TLS setting or file that cannot be used: the setting's dotted key and why.
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
