/// The few protobuf encodings the gRPC transport's own services need (health, reflection, and
/// walking FileDescriptorProtos): a field reader and a writer. The service's messages are
/// AdLoaderWire's business.
struct ProtoReader {
    /// One field: its number, and its value as a varint or as the bytes of a length-delimited
    /// field (fixed-width fields are skipped and reported with neither).
    struct Field {
        var number: UInt64
        var varint: UInt64 = 0
        var bytes: ArraySlice<UInt8> = []

        var string: String { String(decoding: bytes, as: UTF8.self) }
    }

    struct Malformed: Error {}

    private let data: ArraySlice<UInt8>
    private var index: Int

    init(_ data: ArraySlice<UInt8>) {
        self.data = data
        index = data.startIndex
    }

    init(_ data: [UInt8]) { self.init(data[...]) }

    /// The next field, or nil at the end.
    /// - Throws: ``Malformed`` for a truncated field or an unknown wire type.
    mutating func next() throws(Malformed) -> Field? {
        guard index < data.endIndex else { return nil }
        let key = try varint()
        var field = Field(number: key >> 3)
        switch key & 7 {
        case 0: field.varint = try varint()
        case 1: try skip(8)
        case 2:
            let length = try varint()
            guard length <= UInt64(data.endIndex - index) else { throw Malformed() }
            field.bytes = data[index..<index + Int(length)]
            index += Int(length)
        case 5: try skip(4)
        default: throw Malformed()
        }
        return field
    }

    private mutating func skip(_ count: Int) throws(Malformed) {
        guard data.endIndex - index >= count else { throw Malformed() }
        index += count
    }

    private mutating func varint() throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < data.endIndex, shift < 64 {
            let byte = data[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw Malformed()
    }
}

/// Appends protobuf fields.
struct ProtoEncoder {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func varintField(_ number: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        varint(number << 3)
        varint(value)
    }

    /// A length-delimited field, written even when empty (sub-messages, repeated bytes).
    mutating func bytesField(_ number: UInt64, _ value: some Collection<UInt8>) {
        varint(number << 3 | 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A proto3 string: nothing when empty.
    mutating func stringField(_ number: UInt64, _ value: String) {
        guard !value.isEmpty else { return }
        bytesField(number, Array(value.utf8))
    }
}
