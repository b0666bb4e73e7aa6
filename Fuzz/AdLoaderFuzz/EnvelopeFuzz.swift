import AdLoaderModel
import AdLoaderTime
import AdLoaderWire

/// Fuzzes the envelopes and the messages in them, both directions.
///
/// Server side: ``RequestFrame/decodeHeader(_:)`` (in place, what the daemon uses) must
/// agree with ``RequestFrame/init(decoding:)`` (protobuf-c) on every input — accept and
/// refuse the same bytes, read the same call id, method, timeout, cancel flag and message —
/// and the Borrow and Return in the message must decode in place as protobuf-c decodes them.
/// Client side: ``ResponseFrame`` and every response message. Whatever decodes must encode
/// and decode back to itself, and where a message has a hand encoder (ResponseFrame,
/// BorrowResponse, ReturnResponse) it must write exactly protobuf-c's bytes.
public enum EnvelopeFuzz: FuzzTarget {
    public static let name = "envelope"

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        if let message = try requestSide(input) {
            try withBytes(message) { (raw) throws(FuzzFailure) in try requestMessages(raw) }
        }
        if let message = try responseSide(input) {
            try withBytes(message) { (raw) throws(FuzzFailure) in try responseMessages(raw) }
        }
        // The same bytes as a message body directly: the fuzzer need not wrap them first.
        try requestMessages(input)
        try responseMessages(input)
    }

    // MARK: Server side

    /// Compares the two RequestFrame decoders; returns the request message when the header decoded.
    static func requestSide(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) -> [UInt8]? {
        let header = Result { () throws(FrameError) in try RequestFrame.decodeHeader(input) }
        let full = Result { () throws(FrameError) in try RequestFrame(decoding: input) }
        switch (header, full) {
        case (.failure(let error), .failure(let reference)):
            try require(error.code == .badEnvelope, "decodeHeader threw \(error.code), not badEnvelope")
            try require(
                reference.code == .badEnvelope,
                "decodeHeader refused the envelope (\(error)) but protobuf-c read it and refused a string (\(reference))"
            )
            return nil
        case (.failure(let error), .success):
            throw FuzzFailure("decodeHeader refused an envelope protobuf-c decodes: \(error) \(hex(input))")
        case (.success(let header), .failure(let reference)):
            // The header reads no metadata and turns a bad method into a printable non-name.
            try require(
                reference.code == .badMessage,
                "decodeHeader accepted an envelope protobuf-c refuses (\(reference)) \(hex(input))")
            switch reference.message {
            case "method: must be valid UTF-8 without NUL bytes":
                try require(
                    !MethodName.all.contains(header.method) && header.method.contains("\\"),
                    "a method with a NUL or bad UTF-8 was read as \"\(header.method)\"")
            case "metadata.key: must be valid UTF-8 without NUL bytes",
                "metadata.value: must be valid UTF-8 without NUL bytes":
                break
            default:
                throw FuzzFailure("protobuf-c refused the envelope with \(reference), decodeHeader accepted it")
            }
            return header.cancel ? nil : Array(input[header.messageRange])
        case (.success(let header), .success(let reference)):
            let message = Array(input[header.messageRange])
            try require(
                header.callID == reference.callID && header.method == reference.method
                    && header.timeoutMilliseconds == reference.timeoutMilliseconds && header.cancel == reference.cancel
                    && message == reference.message,
                "decodeHeader read \(header) (message \(hex(message))), protobuf-c \(reference)")
            try roundTrip(reference)
            return header.cancel ? nil : message
        }
    }

    /// A server decodes the message of each method; Borrow and Return in place.
    static func requestMessages(_ message: UnsafeRawBufferPointer) throws(FuzzFailure) {
        try ProtoScannerFuzz.compareBorrow(message)
        try ProtoScannerFuzz.compareReturn(message)
        try roundTripIfDecodes(PrefetchRequestMessage.self, message)
        try roundTripIfDecodes(StatsRequestMessage.self, message)
        try roundTripIfDecodes(WatchRequestMessage.self, message)
    }

    // MARK: Client side

    /// Decodes a ResponseFrame the way the client does; returns its message when it decoded.
    static func responseSide(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) -> [UInt8]? {
        guard let frame = try? ResponseFrame(decoding: input) else { return nil }
        // The hand-written frame (the server's fast path) against protobuf-c's packing.
        var handWritten: [UInt8] = []
        frame.append(to: &handWritten)
        let packed = frame.encoded()
        try require(
            handWritten.count >= 5 && Array(handWritten[5...]) == packed,
            "ResponseFrame \(frame): hand-written \(hex(handWritten)), protobuf-c \(hex(packed))")
        let length = handWritten.prefix(5).dropFirst().reduce(0) { $0 << 8 | Int($1) }
        try require(
            handWritten[0] == 0 && length == packed.count,
            "ResponseFrame prefix \(hex(handWritten.prefix(5))) for \(packed.count) bytes")
        try roundTrip(frame)
        if frame.end && frame.status.code != .ok {
            try require(frame.message == nil || !frame.message!.isEmpty, "a final error frame with an empty message")
        }
        return frame.message
    }

    /// What the client decodes a response message as, by method.
    static func responseMessages(_ message: UnsafeRawBufferPointer) throws(FuzzFailure) {
        if let borrow = try? BorrowResponseMessage(decoding: message) {
            let hand = borrow.encoded()
            let packed = borrow.encodedWithProtobufC()
            try require(
                hand == packed, "BorrowResponse \(borrow): hand-written \(hex(hand)), protobuf-c \(hex(packed))")
            try require(
                borrow.encodedSize == hand.count,
                "BorrowResponse encodedSize \(borrow.encodedSize!) for \(hand.count) bytes")
            var framed: [UInt8] = []
            ResponseFrame.append(callID: 3, message: borrow, to: &framed)
            var reference: [UInt8] = []
            ResponseFrame(callID: 3, message: hand, end: true).append(to: &reference)
            try require(
                framed == reference,
                "BorrowResponse framed in place \(hex(framed)), via ResponseFrame \(hex(reference))")
            try roundTrip(borrow)
        }
        if let returned = try? ReturnResponseMessage(decoding: message) {
            let hand = returned.encoded()
            let packed = returned.encodedWithProtobufC()
            try require(
                hand == packed, "ReturnResponse \(returned): hand-written \(hex(hand)), protobuf-c \(hex(packed))")
            try roundTrip(returned)
        }
        try roundTripIfDecodes(PrefetchResponseMessage.self, message)
        try roundTripIfDecodes(StatsResponseMessage.self, message)
        try roundTripIfDecodes(EventMessage.self, message)
    }

    // MARK: Helpers

    static func roundTripIfDecodes<M: WireMessage>(_ type: M.Type, _ bytes: UnsafeRawBufferPointer) throws(FuzzFailure)
    {
        if let value = try? M(decoding: bytes) { try roundTrip(value) }
    }

    /// `value` encodes to bytes that decode to a value encoding to the same bytes (compared
    /// as bytes: a NaN star rating is not equal to itself).
    static func roundTrip<M: WireMessage>(_ value: M) throws(FuzzFailure) {
        let bytes = value.encoded()
        let decoded = Result { () throws(FrameError) in
            try withBytes(bytes) { (raw) throws(FrameError) in try M(decoding: raw) }
        }
        guard case .success(let again) = decoded else {
            throw FuzzFailure("\(M.self) \(value) encodes to \(hex(bytes)), which does not decode: \(decoded)")
        }
        let bytesAgain = again.encoded()
        try require(
            bytesAgain == bytes,
            "\(M.self) \(value) encodes to \(hex(bytes)), decodes to \(again), encodes to \(hex(bytesAgain))")
    }
}
