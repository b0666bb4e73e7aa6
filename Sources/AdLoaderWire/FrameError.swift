/// A stream or message that cannot be decoded.
///
/// Stream-level codes (`messageTooLarge`, `compressedNotSupported`, `badPreface`,
/// `badEnvelope`) mean the byte stream cannot be trusted any more: answer with
/// ``status`` where possible, then close the connection. `badMessage` concerns one call's
/// request or response message only; the connection stays usable.
public struct FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; a struct over a private enum so codes can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case messageTooLarge, compressedNotSupported, badPreface, badEnvelope, badMessage
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A length prefix above the maximum message size.
        public static let messageTooLarge = Code(.messageTooLarge)
        /// The flags byte says "compressed" (1); compression is not supported.
        public static let compressedNotSupported = Code(.compressedNotSupported)
        /// The connection did not start with ``ProtocolPreface/bytes``.
        public static let badPreface = Code(.badPreface)
        /// Unknown flags, or a RequestFrame / ResponseFrame that does not decode.
        public static let badEnvelope = Code(.badEnvelope)
        /// A request or response message (inside a valid envelope) that does not decode, or
        /// holds a value that cannot be represented (e.g. an unknown event kind).
        public static let badMessage = Code(.badMessage)

        public var description: String {
            switch wrapped {
            case .messageTooLarge: "message too large"
            case .compressedNotSupported: "compressed not supported"
            case .badPreface: "bad preface"
            case .badEnvelope: "bad envelope"
            case .badMessage: "bad message"
            }
        }
    }

    public var code: Code
    /// A human-readable explanation, e.g. "message of 5000000 bytes exceeds the limit of 4194304 bytes".
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
