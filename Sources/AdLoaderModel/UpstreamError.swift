/// Why an upstream request failed, and so how the loader reacts.
public struct UpstreamError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable { case retryable, unreachable, final }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A transient failure (timeout, 5xx): retried after the retry delay.
        public static let retryable = Code(.retryable)
        /// The network or the exchange cannot be reached: the loader waits and probes.
        public static let unreachable = Code(.unreachable)
        /// The request itself is wrong (4xx, bad configuration): not retried automatically.
        public static let final = Code(.final)

        public var description: String {
            switch wrapped {
            case .retryable: "retryable"
            case .unreachable: "unreachable"
            case .final: "final"
            }
        }
    }

    public var code: Code
    public var message: String
    /// The least delay before the automatic retry of a `.retryable` failure (an exchange's
    /// `Retry-After`); the retry waits the longer of this and the retry policy's delay.
    public var retryAfter: Duration?

    public init(code: Code, message: String, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code): \(message)" }
}
