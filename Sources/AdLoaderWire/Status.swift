public import AdLoaderModel

/// The outcome of a call: a gRPC status code and a message.
///
/// Thrown by the client on any non-OK answer; sent by the server in the final
/// ``ResponseFrame`` of every call.
public struct Status: Error, Hashable, Sendable, CustomStringConvertible {
    /// A gRPC status code. A struct so that codes can be added without breaking switches.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The gRPC numeric value, 0...16.
        public let rawValue: Int

        private init(_ rawValue: Int) { self.rawValue = rawValue }

        /// Creates a code from its gRPC numeric value; nil outside 0...16.
        public init?(rawValue: Int) {
            guard Code.names.indices.contains(rawValue) else { return nil }
            self.rawValue = rawValue
        }

        public static let ok = Code(0)
        public static let cancelled = Code(1)
        public static let unknown = Code(2)
        public static let invalidArgument = Code(3)
        public static let deadlineExceeded = Code(4)
        public static let notFound = Code(5)
        public static let alreadyExists = Code(6)
        public static let permissionDenied = Code(7)
        public static let resourceExhausted = Code(8)
        public static let failedPrecondition = Code(9)
        public static let aborted = Code(10)
        public static let outOfRange = Code(11)
        public static let unimplemented = Code(12)
        public static let internalError = Code(13)
        public static let unavailable = Code(14)
        public static let dataLoss = Code(15)
        public static let unauthenticated = Code(16)

        /// Every code, by raw value.
        public static let all: [Code] = (0...16).map { Code($0) }

        private static let names = [
            "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
            "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
            "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
        ]

        /// The gRPC name, e.g. "INVALID_ARGUMENT".
        public var description: String { Code.names[rawValue] }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    /// OK with an empty message.
    public static let ok = Status(code: .ok)

    public var isOK: Bool { code == .ok }

    /// "INVALID_ARGUMENT: ad_unit_id: must not be empty", or just the code name when the message is empty.
    public var description: String { message.isEmpty ? code.description : "\(code): \(message)" }
}

/// An error that knows the status a call ends with when it is thrown at dispatch.
public protocol StatusConvertible: Error {
    var status: Status { get }
}

extension Status: StatusConvertible {
    public var status: Status { self }
}

extension FrameError: StatusConvertible {
    /// messageTooLarge -> RESOURCE_EXHAUSTED, compressedNotSupported -> UNIMPLEMENTED,
    /// badPreface / badEnvelope / badMessage -> INVALID_ARGUMENT; the message is kept.
    public var status: Status {
        switch code {
        case .messageTooLarge: Status(code: .resourceExhausted, message: message)
        case .compressedNotSupported: Status(code: .unimplemented, message: message)
        default: Status(code: .invalidArgument, message: message)
        }
    }
}

extension LoaderError: StatusConvertible {
    /// invalidArgument -> INVALID_ARGUMENT "field: message", notFound -> NOT_FOUND,
    /// resourceExhausted -> RESOURCE_EXHAUSTED, failedPrecondition -> FAILED_PRECONDITION
    /// (message only), unavailable -> UNAVAILABLE.
    public var status: Status {
        switch code {
        case .invalidArgument: Status(code: .invalidArgument, message: description)
        case .notFound: Status(code: .notFound, message: description)
        case .resourceExhausted: Status(code: .resourceExhausted, message: description)
        case .failedPrecondition: Status(code: .failedPrecondition, message: message)
        default: Status(code: .unavailable, message: description)
        }
    }
}
