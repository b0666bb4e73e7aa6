/// Why the admin server refuses a request's bytes: each code maps to the HTTP status the
/// server answers with before it closes the connection.
public struct HTTPRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case malformed, headTooLarge, tooManyHeaders, bodyNotAllowed, timeout
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The bytes are not HTTP/1.x (the parser's error is in the message): 400.
        public static let malformed = Code(.malformed)
        /// The request line and headers exceed ``AdminLimits/maxRequestHeadBytes``: 431.
        public static let headTooLarge = Code(.headTooLarge)
        /// More header lines than ``AdminLimits/maxHeaderCount``: 431.
        public static let tooManyHeaders = Code(.tooManyHeaders)
        /// The request has a body (Content-Length above 0 or chunked): 413.
        public static let bodyNotAllowed = Code(.bodyNotAllowed)
        /// The request head did not complete within ``AdminLimits/requestTimeout``: 408.
        public static let timeout = Code(.timeout)

        /// The HTTP status answered for this code.
        public var httpStatus: HTTPStatus {
            switch wrapped {
            case .malformed: .badRequest
            case .headTooLarge, .tooManyHeaders: .requestHeaderFieldsTooLarge
            case .bodyNotAllowed: .contentTooLarge
            case .timeout: .requestTimeout
            }
        }

        public var description: String {
            switch wrapped {
            case .malformed: "malformed"
            case .headTooLarge: "head too large"
            case .tooManyHeaders: "too many headers"
            case .bodyNotAllowed: "body not allowed"
            case .timeout: "timeout"
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
