/// Writes gRPC length-prefixed messages: flags 0, 4-byte big-endian length, the bytes.
public enum FrameEncoder {
    /// Appends the 5-byte prefix and `message` to `buffer`.
    /// - Important: `message.count` must fit in a UInt32.
    public static func append(_ message: some Collection<UInt8>, to buffer: inout [UInt8]) {
        appendPrefix(length: message.count, to: &buffer)
        buffer.append(contentsOf: message)
    }

    /// Appends the 5-byte prefix (flags 0, big-endian `length`).
    public static func appendPrefix(length: Int, to buffer: inout [UInt8]) {
        precondition(length >= 0 && length <= Int(UInt32.max), "frame length out of range")
        let n = UInt32(length)
        buffer.append(0)
        buffer.append(UInt8(truncatingIfNeeded: n >> 24))
        buffer.append(UInt8(truncatingIfNeeded: n >> 16))
        buffer.append(UInt8(truncatingIfNeeded: n >> 8))
        buffer.append(UInt8(truncatingIfNeeded: n))
    }

    /// Overwrites the 4 length bytes of a prefix written at `prefixIndex`.
    static func patchLength(_ length: Int, at prefixIndex: Int, in buffer: inout [UInt8]) {
        precondition(length >= 0 && length <= Int(UInt32.max), "frame length out of range")
        let n = UInt32(length)
        buffer[prefixIndex + 1] = UInt8(truncatingIfNeeded: n >> 24)
        buffer[prefixIndex + 2] = UInt8(truncatingIfNeeded: n >> 16)
        buffer[prefixIndex + 3] = UInt8(truncatingIfNeeded: n >> 8)
        buffer[prefixIndex + 4] = UInt8(truncatingIfNeeded: n)
    }
}
