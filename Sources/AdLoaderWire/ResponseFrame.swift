internal import CAdLoaderProto
internal import CProtobufC

/// The server-to-client envelope: one response message of a call and/or its final status.
///
/// A unary call is answered by one frame with `end == true`: the response message with
/// status OK, or no message with a non-OK status. Watch sends one frame per event with
/// `end == false`, then a final frame with `end == true`, no message and the status.
public struct ResponseFrame: WireMessage {
    public var callID: UInt64
    /// One encoded response message; nil on a final frame that carries none (errors, the end of Watch).
    public var message: [UInt8]?
    /// The call is over; `status` is final.
    public var end: Bool
    /// The call's status; meaningful only when `end` is set (OK otherwise).
    public var status: Status

    public init(callID: UInt64, message: [UInt8]? = nil, end: Bool, status: Status = .ok) {
        self.callID = callID
        self.message = message
        self.end = end
        self.status = status
    }

    /// Decodes an envelope (the body of one length-prefixed frame).
    ///
    /// An empty message field reads as `[]` unless the frame ends the call with a non-OK
    /// status (then nil): an all-default message encodes to zero bytes. A status value
    /// outside 0...16 reads as UNKNOWN, as in gRPC.
    /// - Throws: ``FrameError`` `.badEnvelope` when the bytes are not a ResponseFrame.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ResponseFrame", unpack: adloader__v1__response_frame__unpack,
            free: adloader__v1__response_frame__free_unpacked, code: .badEnvelope
        ) { m in
            let p = m.pointee
            let end = p.end != 0
            let code = end ? (Status.Code(rawValue: Int(p.status)) ?? .unknown) : .ok
            let status = Status(code: code, message: end ? swiftString(p.status_message) : "")
            let body = swiftBytes(p.message)
            let message: [UInt8]? = body.isEmpty && end && code != .ok ? nil : body
            return ResponseFrame(callID: p.call_id, message: message, end: end, status: status)
        }
    }

    /// The protobuf encoding of the envelope, packed by protobuf-c.
    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__ResponseFrame()
            adloader__v1__response_frame__init(&m)
            m.call_id = callID
            m.end = end ? 1 : 0
            m.status = UInt32(status.code.rawValue)
            m.status_message = arena.cString(status.message)
            (message ?? []).withUnsafeBufferPointer { body in
                m.message = ProtobufCBinaryData(len: body.count, data: UnsafeMutablePointer(mutating: body.baseAddress))
                appendPacked(&m, to: &buffer)
            }
        }
    }

    /// Appends the whole frame: the 5-byte prefix and the envelope.
    public func append(to buffer: inout [UInt8]) {
        if let message {
            message.withUnsafeBytes { body in
                Self.append(callID: callID, end: end, status: status, to: &buffer) { $0.append(contentsOf: body) }
            }
        } else {
            Self.append(callID: callID, end: end, status: status, to: &buffer, message: nil)
        }
    }

    // MARK: - Fast paths for the server

    /// Appends a whole frame answering call `callID` with `message` (encoded straight into
    /// `buffer`, no intermediate copy).
    /// - Parameters:
    ///   - end: true for a unary answer (status OK), false for one Watch event.
    public static func append(callID: UInt64, message: some WireMessage, end: Bool = true, to buffer: inout [UInt8]) {
        guard let size = message.encodedSize else {
            append(callID: callID, end: end, status: .ok, to: &buffer) { message.encode(into: &$0) }
            return
        }
        // Size known up front: prefix, call id, message key and length, then the message
        // encoded in place; nothing to move afterwards.
        var length = end ? 2 : 0
        if callID != 0 { length += 1 + ProtoSize.varint(callID) }
        if size > 0 { length += 1 + ProtoSize.varint(UInt64(size)) + size }
        let headerSize = 5 + length - (end ? 2 : 0) - size
        buffer.appendWritten(count: headerSize) { w in
            w.responseFrameHeader(length: length, callID: callID)
            if size > 0 {
                w.byte(0x12)
                w.varint(UInt64(size))
            }
        }
        if size > 0 {
            let before = buffer.count
            message.encode(into: &buffer)
            precondition(buffer.count - before == size, "encodedSize differs from what encode(into:) wrote")
        }
        if end {
            buffer.append(0x18)
            buffer.append(0x01)
        }
    }

    /// The size of the envelope (without the 5-byte prefix) of a final OK answer to call
    /// `callID` carrying a message of `messageSize` bytes: what a client's message size limit
    /// applies to.
    public static func envelopeSize(callID: UInt64, messageSize: Int) -> Int {
        var length = 2
        if callID != 0 { length += 1 + ProtoSize.varint(callID) }
        if messageSize > 0 { length += 1 + ProtoSize.varint(UInt64(messageSize)) + messageSize }
        return length
    }

    /// Appends a whole final frame for call `callID` with `status` and no message.
    public static func append(callID: UInt64, status: Status, to buffer: inout [UInt8]) {
        append(callID: callID, end: true, status: status, to: &buffer, message: nil)
    }

    /// Writes the envelope by hand, in field order, exactly as protobuf-c packs it (the
    /// tests compare both), so the message can be encoded in place.
    private static func append(
        callID: UInt64, end: Bool, status: Status, to buffer: inout [UInt8],
        message writeMessage: ((inout [UInt8]) -> Void)?
    ) {
        let prefixIndex = buffer.count
        FrameEncoder.appendPrefix(length: 0, to: &buffer)
        if callID != 0 {
            buffer.append(0x08)
            appendVarint(callID, to: &buffer)
        }
        if let writeMessage {
            // Tag, then room for the longest length varint (5 bytes for a UInt32 length);
            // after encoding, the message is moved back when its length needs fewer bytes.
            let tagIndex = buffer.count
            buffer.append(0x12)
            buffer.append(contentsOf: repeatElement(0, count: 5))
            let bodyStart = buffer.count
            writeMessage(&buffer)
            let length = buffer.count - bodyStart
            if length == 0 {
                buffer.removeSubrange(tagIndex...)
            } else {
                let lengthSize = ProtoSize.varint(UInt64(length))
                let shift = 5 - lengthSize
                buffer.withUnsafeMutableBufferPointer { b in
                    var w = ProtoWriter(b.baseAddress! + tagIndex + 1)
                    w.varint(UInt64(length))
                    if shift > 0 {
                        let base = b.baseAddress!
                        (base + bodyStart - shift).update(from: base + bodyStart, count: length)
                    }
                }
                if shift > 0 { buffer.removeLast(shift) }
            }
        }
        if end { buffer.append(contentsOf: [0x18, 0x01] as [UInt8]) }
        if status.code.rawValue != 0 {
            buffer.append(0x20)
            appendVarint(UInt64(status.code.rawValue), to: &buffer)
        }
        if !status.message.isEmpty {
            // Up to the first NUL, like the C string protobuf-c would pack.
            let utf8 = status.message.utf8.prefix { $0 != 0 }
            buffer.append(0x2a)
            appendVarint(UInt64(utf8.count), to: &buffer)
            buffer.append(contentsOf: utf8)
        }
        FrameEncoder.patchLength(buffer.count - prefixIndex - 5, at: prefixIndex, in: &buffer)
    }
}

/// Appends the protobuf base-128 varint of `value`.
@inline(__always)
func appendVarint(_ value: UInt64, to buffer: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
        buffer.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    buffer.append(UInt8(v))
}
