/// TLS for a client connection (a daemon started with `--tls-cert`/`--tls-key`; SECURITY.md).
///
/// The server's certificate is always verified: against `caFile` when given, else the system's
/// trust store; its name (DNS name, or IP address in the subject alternative names) must match
/// `serverName`, by default the endpoint's host. TLS 1.2 is the minimum, 1.3 is preferred; ALPN
/// offers `adloader/1`. `certificateFile` and `keyFile` (PEM) present a client certificate to a
/// daemon that asks for one (`--tls-client-auth optional|required`). TLS runs over TCP endpoints
/// only: the daemon's Unix socket is cleartext.
public struct ClientTLS: Sendable, Hashable {
    /// PEM file of the CA certificates that may sign the server's certificate; nil: the system's.
    public var caFile: String?
    /// PEM certificate chain presented to the server; needs ``keyFile``.
    public var certificateFile: String?
    /// PEM private key of ``certificateFile``.
    public var keyFile: String?
    /// The name the server's certificate must carry (and the SNI sent); nil: the endpoint's host.
    public var serverName: String?

    public init(
        caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, serverName: String? = nil
    ) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.serverName = serverName
    }

    /// How long the handshake may take before the connection is given up.
    static let handshakeTimeoutSeconds = 10
}
