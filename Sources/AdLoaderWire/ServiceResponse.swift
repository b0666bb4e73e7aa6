/// The final OK answer of a unary call: the one type every transport's responder takes, so
/// that a new call adds a message, not an overload in each transport.
///
/// Borrow and Return, the hot calls, have their own cases: both transports write them with
/// hand-sized encoders, the Borrow's ad taken from the wire-level ``EncodedAdCache``. Every
/// other answer is a ``WireMessage`` written by its generic encoder, boxed (``message(_:)``):
/// an existential payload would make the whole enum address-only, and every Borrow answer
/// would go through value-witness copies (measured: +15 % CPU per framed call).
public enum ServiceResponse: Sendable {
    case borrow(BorrowResponseMessage)
    case returned(ReturnResponseMessage)
    case other(Boxed)

    /// Any other call's answer.
    public static func message(_ message: some WireMessage) -> ServiceResponse { .other(Boxed(message)) }

    /// A message of a call without a case of its own.
    public final class Boxed: Sendable {
        public let message: any WireMessage
        init(_ message: any WireMessage) { self.message = message }
    }

    /// The protobuf size of the answer's message (what a client's message size limit applies
    /// to on gRPC; the framed envelope adds a few bytes, ``ResponseFrame/envelopeSize(callID:messageSize:)``).
    public var messageSize: Int {
        switch self {
        case .borrow(let message): message.encodedSize ?? message.encoded().count
        case .returned(let message): message.encodedSize ?? message.encoded().count
        case .other(let boxed): boxed.message.encodedSize ?? boxed.message.encoded().count
        }
    }

    /// The message, for tests and tools that compare answers.
    public var wireMessage: any WireMessage {
        switch self {
        case .borrow(let message): message
        case .returned(let message): message
        case .other(let boxed): boxed.message
        }
    }
}

extension ServiceResponse: Equatable {
    public static func == (a: ServiceResponse, b: ServiceResponse) -> Bool {
        AnyHashable(a.wireMessage) == AnyHashable(b.wireMessage)
    }
}

extension ResponseFrame {
    /// Appends the whole framed answer (`end: true`, status OK) of call `callID`.
    @inline(__always)
    public static func append(
        callID: UInt64, response: ServiceResponse, cache: EncodedAdCache, to buffer: inout [UInt8]
    ) {
        switch response {
        case .borrow(let message): append(callID: callID, borrow: message, cache: cache, to: &buffer)
        case .returned(let message): append(callID: callID, returned: message, to: &buffer)
        case .other(let boxed): append(callID: callID, message: boxed.message, end: true, to: &buffer)
        }
    }
}

extension ServiceResponse {
    /// Appends the answer as one gRPC length-prefixed message (5-byte prefix, then the
    /// message), the Borrow's ad taken from `cache` like the framed transport's.
    @inline(__always)
    public func appendLengthPrefixed(cache: EncodedAdCache, to buffer: inout [UInt8]) {
        switch self {
        case .borrow(let message): message.appendLengthPrefixed(cache: cache, to: &buffer)
        case .returned(let message): message.appendFrame(to: &buffer)
        case .other(let boxed): boxed.message.appendFrame(to: &buffer)
        }
    }
}

extension BorrowResponseMessage {
    /// What ``WireMessage/appendFrame(to:)`` writes, with the lease's ad copied from `cache`
    /// (encoded once per ad for every transport) and every length computed before writing.
    public func appendLengthPrefixed(cache: EncodedAdCache, to buffer: inout [UInt8]) {
        guard let lease else {
            appendFrame(to: &buffer)
            return
        }
        let outcome = outcomeWireValue
        cache.withEncodingAndEnd(of: lease.ad) { adAndEnd in
            let adSize = adAndEnd.count - 2
            let leaseSize = lease.protoSize(adSize: adSize)
            let messageSize = ProtoSize.varintField(key: 0x08, outcome) + ProtoSize.delimited(key: 0x12, leaseSize)
            buffer.appendWritten(count: 5 + messageSize - adSize) { w in
                w.byte(0)
                w.byte(UInt8(truncatingIfNeeded: UInt32(messageSize) >> 24))
                w.byte(UInt8(truncatingIfNeeded: UInt32(messageSize) >> 16))
                w.byte(UInt8(truncatingIfNeeded: UInt32(messageSize) >> 8))
                w.byte(UInt8(truncatingIfNeeded: UInt32(messageSize)))
                w.varintField(key: 0x08, outcome)
                w.byte(0x12)
                w.varint(UInt64(leaseSize))
                lease.writeHeader(to: &w, adSize: adSize)
            }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: adAndEnd[..<adSize]))
        }
    }
}
