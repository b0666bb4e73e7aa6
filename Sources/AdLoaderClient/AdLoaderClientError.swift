/// A local failure of the client: the server could not be reached, its TLS handshake failed, or
/// an endpoint string is malformed. Answers of the server are thrown as `Status` instead (AdLoaderWire).
public struct AdLoaderClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; a struct over a private enum so codes can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable { case invalidEndpoint, connectFailed, tlsFailed }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// An endpoint that is not `HOST:PORT` or a usable Unix socket path.
        public static let invalidEndpoint = Code(.invalidEndpoint)
        /// Name resolution, `socket` or `connect` failed.
        public static let connectFailed = Code(.connectFailed)
        /// The TLS handshake failed: the server's certificate not accepted (untrusted, expired,
        /// another name), a client certificate or CA file that cannot be used, an alert.
        public static let tlsFailed = Code(.tlsFailed)

        public var description: String {
            switch wrapped {
            case .invalidEndpoint: "invalid endpoint"
            case .connectFailed: "connect failed"
            case .tlsFailed: "TLS failed"
            }
        }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
