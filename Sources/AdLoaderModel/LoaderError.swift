/// A request the loader refuses; maps to a gRPC status at the server.
public struct LoaderError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case invalidArgument, notFound, unavailable, resourceExhausted, failedPrecondition
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A field is empty, unknown or out of range; `field` names it.
        public static let invalidArgument = Code(.invalidArgument)
        /// The lease is unknown (never lent, already returned, or reclaimed).
        public static let notFound = Code(.notFound)
        /// The loader is disabled or shutting down.
        public static let unavailable = Code(.unavailable)
        /// A resource limit of the loader is reached, e.g. its
        /// ``LoaderConfiguration/maximumPools``; the message names the limit. Nothing was
        /// changed or asked upstream; the same call may succeed once the resource is freed.
        public static let resourceExhausted = Code(.resourceExhausted)
        /// The call does not fit the state or kind of what it names, e.g. AppOpen on a loader
        /// whose format is not appOpen; the message says what.
        public static let failedPrecondition = Code(.failedPrecondition)

        public var description: String {
            switch wrapped {
            case .invalidArgument: "invalid argument"
            case .notFound: "not found"
            case .unavailable: "unavailable"
            case .resourceExhausted: "resource exhausted"
            case .failedPrecondition: "failed precondition"
            }
        }
    }

    public var code: Code
    /// The request field at fault, e.g. "ad_unit_id", when there is one.
    public var field: String?
    public var message: String

    public init(code: Code, field: String? = nil, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { field.map { "\($0): \(message)" } ?? message }
}
