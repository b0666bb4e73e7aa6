/// Why an HTTP request got no response.
public struct HTTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case connectionFailed, nameResolution, timedOut, transport, responseTooLarge, badRequest, cancelled
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// Refused or unreachable: nothing listens there, or no route.
        public static let connectionFailed = Code(.connectionFailed)
        /// The host name did not resolve.
        public static let nameResolution = Code(.nameResolution)
        /// The connect timeout or the request's timeout passed.
        public static let timedOut = Code(.timedOut)
        /// The connection broke, or the peer spoke something else than HTTP.
        public static let transport = Code(.transport)
        /// The body passed the client's cap.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The request cannot be sent as given (a bad URL, say).
        public static let badRequest = Code(.badRequest)
        /// The client closed before it ended.
        public static let cancelled = Code(.cancelled)

        public var description: String {
            switch wrapped {
            case .connectionFailed: "connection failed"
            case .nameResolution: "name resolution failed"
            case .timedOut: "timed out"
            case .transport: "transport error"
            case .responseTooLarge: "response too large"
            case .badRequest: "bad request"
            case .cancelled: "cancelled"
            }
        }
    }

    public var code: Code
    public var message: String
    /// Whether any byte of the request went out: false when it failed while connecting (or
    /// before), so the server never saw it. A source counts only sent requests as sent.
    public var requestSent: Bool

    /// `requestSent` nil: false for a failure that happens before anything is sent
    /// (connection failed, name resolution, bad request, cancelled), else true.
    public init(code: Code, message: String, requestSent: Bool? = nil) {
        self.code = code
        self.message = message
        self.requestSent =
            requestSent
            ?? !(code == .connectionFailed || code == .nameResolution || code == .badRequest || code == .cancelled)
    }

    public var description: String { "\(code): \(message)" }
}
