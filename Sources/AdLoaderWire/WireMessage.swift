/// A Swift value that travels as one protobuf message of `adloader.v1`.
public protocol WireMessage: Hashable, Sendable {
    /// Decodes the protobuf encoding of the message.
    /// - Throws: ``FrameError`` `.badMessage` when the bytes do not decode or hold a value
    ///   the Swift type cannot represent (the message names the field); `.badEnvelope` for
    ///   ``RequestFrame`` and ``ResponseFrame``.
    init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError)

    /// The protobuf encoding, appended to `buffer` (no length prefix).
    func encode(into buffer: inout [UInt8])

    /// The exact number of bytes ``encode(into:)`` appends, when the type knows it without
    /// encoding (the hand-encoded answers of the hot path); nil otherwise.
    var encodedSize: Int? { get }

    /// The proto name of the first string field whose value holds a NUL, or nil.
    ///
    /// Such a value cannot be sent as is: protobuf-c packs strings as C strings and would cut
    /// it at the NUL (and a receiver refuses NUL bytes anyway), so senders check this first
    /// and refuse the request instead of sending something else than asked.
    var stringFieldWithNUL: String? { get }
}

extension WireMessage {
    /// Unknown in general: ``ResponseFrame`` then encodes first and fixes the length after.
    public var encodedSize: Int? { nil }

    /// No string field to check (response messages: the server's values).
    public var stringFieldWithNUL: String? { nil }

    /// Decodes the protobuf encoding of the message from any byte collection.
    public init(decoding bytes: some Collection<UInt8>) throws(FrameError) {
        let decode = { (buffer: UnsafeRawBufferPointer) -> Result<Self, FrameError> in
            do throws(FrameError) {
                return .success(try Self(decoding: buffer))
            } catch {
                return .failure(error)
            }
        }
        let result =
            bytes.withContiguousStorageIfAvailable { decode(UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { decode($0) }
        self = try result.get()
    }

    /// The protobuf encoding (no length prefix).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Appends one length-prefixed frame holding this message (5-byte prefix + encoding).
    public func appendFrame(to buffer: inout [UInt8]) {
        let prefixIndex = buffer.count
        FrameEncoder.appendPrefix(length: 0, to: &buffer)
        encode(into: &buffer)
        FrameEncoder.patchLength(buffer.count - prefixIndex - 5, at: prefixIndex, in: &buffer)
    }
}

/// The first name in `fields` whose value holds a NUL byte.
@inline(__always)
func firstFieldWithNUL(_ fields: KeyValuePairs<String, String>) -> String? {
    fields.first { $0.value.utf8.contains(0) }?.key
}
