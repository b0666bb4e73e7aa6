/// An incremental decoder of gRPC length-prefixed messages: flags (1 byte, must be 0),
/// length (4 bytes, big-endian), then `length` bytes.
///
/// Feed it whatever a read returned with ``append(_:)``, then call ``next()`` until it
/// returns nil. The length prefix is checked against the limit as soon as its 5 bytes are
/// here, before anything is allocated for the message, so an oversize frame is reported
/// without buffering its body.
///
/// Optionally it first checks the 12-byte ``ProtocolPreface`` (server and client both
/// expect it from the other side).
///
/// Memory: the buffer holds the bytes not yet consumed plus one read; a frame larger than
/// that grows it, and it is given back (down to at most ``retainedCapacity``) once the frame
/// is consumed.
///
/// - Important: after ``next()`` throws, the stream is unusable: every later call throws
///   the same error. Close the connection.
public struct FrameDecoder: Sendable {
    /// The largest message body accepted, in bytes.
    public let maximumMessageSize: Int

    private var buffer: [UInt8] = []
    /// Bytes of `buffer` before this index are consumed.
    private var readIndex = 0
    /// How many preface bytes are still expected.
    private var prefaceRemaining: Int

    /// Compact (move the unread tail to the front) only once this many bytes are consumed
    /// and they are at least half of the buffer, so compaction stays rare and cheap.
    private static let compactThreshold = 64 * 1024

    /// The most buffer capacity kept once the bytes that needed more are consumed: a large
    /// frame's buffer is given back after it (1,024 idle connections that once sent a 4 MiB
    /// frame would otherwise hold 4 GiB), as the connection's output buffer does.
    ///
    /// Four 64 KiB reads: small frames never need more, because ``append(_:)`` makes room by
    /// compacting before it lets the buffer grow; so their path never shrinks or regrows it.
    public static let retainedCapacity = 256 * 1024

    /// Creates a decoder.
    /// - Parameters:
    ///   - maximumMessageSize: the largest message body accepted (e.g. 4 MiB).
    ///   - expectingPreface: check that the stream starts with ``ProtocolPreface/bytes``.
    public init(maximumMessageSize: Int, expectingPreface: Bool = false) {
        precondition(maximumMessageSize >= 0, "maximumMessageSize must not be negative")
        self.maximumMessageSize = maximumMessageSize
        self.prefaceRemaining = expectingPreface ? ProtocolPreface.count : 0
    }

    /// Appends bytes read from the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 0
            && (buffer.count + bytes.count > buffer.capacity
                || (readIndex >= Self.compactThreshold && readIndex * 2 >= buffer.count))
        {
            // Compacting before the buffer would grow keeps it at the size of the bytes not
            // yet consumed plus one read: only a frame larger than that makes it grow.
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// True once the preface (when expected) has been received and checked.
    public var prefaceReceived: Bool { prefaceRemaining == 0 }

    /// True when received bytes are buffered that ``next()`` has not returned yet: an
    /// incomplete frame or preface, *or whole frames not taken yet* (e.g. while the reader is
    /// paused). The same as `bufferedByteCount > 0`.
    ///
    /// - Important: despite its name this does not tell whether the stream stops in the middle
    ///   of a frame; use ``hasIncompleteFrame`` for that. Kept with this meaning because
    ///   callers rely on it.
    public var hasPartialFrame: Bool { readIndex < buffer.count }

    /// True when the next frame (or the preface) has started but its bytes are not all
    /// here, so ``next()`` would return nil until more arrive. False when nothing of it is
    /// here, when a whole frame is buffered, and when ``next()`` would throw. Preface bytes
    /// that ``next()`` has already checked count as received: the answer does not depend on
    /// whether ``next()`` was called.
    public var hasIncompleteFrame: Bool {
        let available = buffer.count - readIndex
        if prefaceRemaining > 0 {
            // The preface is checked by next(); a wrong byte is an error, not a wait.
            let expected = ProtocolPreface.bytes
            let position = ProtocolPreface.count - prefaceRemaining
            for i in 0..<min(available, prefaceRemaining) where buffer[readIndex + i] != expected[position + i] {
                return false
            }
            // Started (bytes taken by next() or still buffered) and not all here.
            if available < prefaceRemaining { return position + available > 0 }
        }
        let start = readIndex + prefaceRemaining
        let rest = buffer.count - start
        guard rest > 0 else { return false }
        guard rest >= 5 else { return true }  // next() reads the flags only once 5 bytes are here
        let length = Int(
            UInt32(buffer[start + 1]) << 24 | UInt32(buffer[start + 2]) << 16 | UInt32(buffer[start + 3]) << 8
                | UInt32(buffer[start + 4]))
        guard buffer[start] == 0, length <= maximumMessageSize else { return false }
        return rest - 5 < length
    }

    /// How many received bytes are not yet returned as messages.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// The bytes the buffer can hold without growing: what the decoder keeps allocated. At most
    /// ``retainedCapacity`` once a larger frame is consumed; for tests and diagnostics.
    public var bufferCapacity: Int { buffer.capacity }

    /// Returns the next whole message body, or nil when more bytes are needed.
    /// - Throws: ``FrameError`` with `.badPreface`, `.messageTooLarge` (naming the length
    ///   and the limit), `.compressedNotSupported` (flags 1) or `.badEnvelope` (other flags).
    public mutating func next() throws(FrameError) -> [UInt8]? {
        try withNextMessage { Array($0) }
    }

    /// Calls `body` with the next whole message body without copying it, or returns nil
    /// when more bytes are needed.
    ///
    /// - Important: the pointer is valid only inside `body`.
    /// - Throws: as ``next()``.
    public mutating func withNextMessage<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(FrameError) -> R? {
        if prefaceRemaining > 0 {
            try checkPreface()
            if prefaceRemaining > 0 { return nil }
        }
        let available = buffer.count - readIndex
        guard available >= 5 else { return nil }
        let (flags, length) = buffer.withUnsafeBufferPointer { b in
            let p = readIndex
            let length = UInt32(b[p + 1]) << 24 | UInt32(b[p + 2]) << 16 | UInt32(b[p + 3]) << 8 | UInt32(b[p + 4])
            return (b[p], Int(length))
        }
        switch flags {
        case 0: break
        case 1:
            throw FrameError(code: .compressedNotSupported, message: "compressed messages (flags 1) are not supported")
        default:
            throw FrameError(code: .badEnvelope, message: "unknown flags \(flags) in the message prefix (must be 0)")
        }
        guard length <= maximumMessageSize else {
            throw FrameError(
                code: .messageTooLarge,
                message: "message of \(length) bytes exceeds the limit of \(maximumMessageSize) bytes")
        }
        guard available - 5 >= length else { return nil }
        let start = readIndex + 5
        readIndex = start + length
        let result = buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
        if buffer.capacity > Self.retainedCapacity { releaseLargeBuffer() }
        return result
    }

    /// Gives back a buffer grown for a large frame, once what is left unread fits a modest
    /// one: the rest (usually nothing, or the start of the next frame) moves to a buffer of
    /// its own size. While a large frame is still arriving, the buffer stays.
    private mutating func releaseLargeBuffer() {
        let unread = buffer.count - readIndex
        guard unread <= Self.retainedCapacity / 2 else { return }
        buffer = unread == 0 ? [] : Array(buffer[readIndex...])
        readIndex = 0
    }

    private mutating func checkPreface() throws(FrameError) {
        let expected = ProtocolPreface.bytes
        while prefaceRemaining > 0 && readIndex < buffer.count {
            let position = ProtocolPreface.count - prefaceRemaining
            guard buffer[readIndex] == expected[position] else {
                throw FrameError(
                    code: .badPreface,
                    message: "the connection must start with \"ADLOADER/1\\r\\n\"; byte \(position) is 0x"
                        + String(buffer[readIndex], radix: 16))
            }
            readIndex += 1
            prefaceRemaining -= 1
        }
    }
}
