#if canImport(Glibc)
    import Glibc
#endif

// In-place protobuf reading for the requests on the server's hot path (the RequestFrame
// envelope, BorrowRequest, ReturnRequest). It accepts and rejects exactly what
// libprotobuf-c 1.4's `protobuf_c_message_unpack` does with the generated descriptors,
// quirks included, and reads the same values — the tests compare both on valid frames,
// every wire type for every field, truncations, overlong varints and random bytes:
//
// - A key is at most 5 bytes; a first byte without field bits and without the continuation
//   bit is an error; the field number keeps the low 32 bits (`&<<`).
// - Wire types 0, 1, 2 and 5 are scanned (a varint is at most 10 bytes, a length prefix at
//   most 5); any other wire type is an error, even for unknown fields.
// - A known field must have the wire type of its type (varint for integers, length-prefixed
//   for strings, bytes and messages), except bool: any wire type, true when any scanned
//   byte of the value (a length prefix included) has one of its low 7 bits set.
// - uint32 keeps the low 32 bits of the first 5 bytes of the varint; uint64 of up to 10.
// - The last occurrence of a field wins; every repeated message element must unpack.
// - A string is its bytes up to the first NUL (a C string), decoded like `String(cString:)`.
//   On top of protobuf-c, a string field holding a NUL or invalid UTF-8 is refused with
//   `.badMessage` naming the field (StringValidation.swift), on both paths and only once
//   the whole message scanned: a message that does not decode reports that first.

/// One field as protobuf-c's scan sees it.
struct ScannedField {
    var number: UInt32
    var wireType: UInt8
    /// The value: for varints, fixed32 and fixed64 the bytes scanned; for length-prefixed
    /// fields the data after the prefix.
    var value: UnsafeRawBufferPointer
    /// The whole scanned value, a length prefix included (what protobuf-c's bool reads).
    var raw: UnsafeRawBufferPointer
}

struct ProtoScanner {
    static let varint: UInt8 = 0
    static let fixed64: UInt8 = 1
    static let lengthPrefixed: UInt8 = 2
    static let fixed32: UInt8 = 5

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The next field; nil at the end. - Throws: `Failure` where protobuf-c's scan fails.
    @inline(__always)
    mutating func next() throws(Failure) -> ScannedField? {
        let count = bytes.count
        guard offset < count else { return nil }
        // Key: parse_tag_and_wiretype.
        let first = bytes[offset]
        if first & 0xF8 == 0 { throw Failure() }
        let wireType = first & 7
        var number = UInt32((first & 0x7F) >> 3)
        var used = 1
        if first & 0x80 != 0 {
            let maximum = min(count - offset, 5)
            var shift: UInt32 = 4
            var done = false
            while used < maximum {
                let byte = bytes[offset + used]
                used += 1
                if byte & 0x80 != 0 {
                    number |= UInt32(byte & 0x7F) &<< shift
                    shift += 7
                } else {
                    number |= UInt32(byte) &<< shift
                    done = true
                    break
                }
            }
            if !done { throw Failure() }
        }
        offset += used
        let remaining = count - offset
        let start = offset
        var valueStart = start
        var length: Int
        switch wireType {
        case Self.varint:
            let maximum = min(remaining, 10)
            var i = 0
            while i < maximum && bytes[start + i] & 0x80 != 0 { i += 1 }
            if i == maximum { throw Failure() }
            length = i + 1
        case Self.fixed64:
            if remaining < 8 { throw Failure() }
            length = 8
        case Self.lengthPrefixed:
            let maximum = min(remaining, 5)
            var value: UInt64 = 0
            var shift: UInt64 = 0
            var i = 0
            while i < maximum {
                let byte = bytes[start + i]
                value |= UInt64(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 { break }
                i += 1
            }
            if i == maximum { throw Failure() }
            let prefix = i + 1
            if value > UInt64(Int32.max) || UInt64(prefix) + value > UInt64(remaining) { throw Failure() }
            length = prefix + Int(value)
            valueStart = start + prefix
        case Self.fixed32:
            if remaining < 4 { throw Failure() }
            length = 4
        default:
            throw Failure()
        }
        offset = start + length
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<(start + length)])
        return ScannedField(number: number, wireType: wireType, value: value, raw: raw)
    }

    struct Failure: Error {}

    // MARK: Values, as protobuf-c's parse_* functions read them

    /// parse_uint32: the low 32 bits of the first 5 bytes.
    static func uint32(_ field: ScannedField) throws(Failure) -> UInt32 {
        guard field.wireType == varint else { throw Failure() }
        var result: UInt32 = 0
        var shift: UInt32 = 0
        for i in 0..<min(field.value.count, 5) {
            let byte = i < 4 ? field.value[i] & 0x7F : field.value[i]
            result |= UInt32(byte) &<< shift
            shift += 7
        }
        return result
    }

    /// parse_uint64.
    static func uint64(_ field: ScannedField) throws(Failure) -> UInt64 {
        guard field.wireType == varint else { throw Failure() }
        if field.value.count < 5 { return UInt64(try uint32(field)) }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        for byte in field.value {
            result |= UInt64(byte & 0x7F) &<< shift
            shift += 7
        }
        return result
    }

    /// parse_boolean: any wire type; true when a scanned byte has a low bit set.
    static func bool(_ field: ScannedField) -> Bool {
        field.raw.contains { $0 & 0x7F != 0 }
    }

    /// The bytes of a length-prefixed field (strings, bytes, messages).
    static func bytes(_ field: ScannedField) throws(Failure) -> UnsafeRawBufferPointer {
        guard field.wireType == lengthPrefixed else { throw Failure() }
        return field.value
    }

    /// A string field, exactly its bytes; "" when they hold a NUL or are not valid UTF-8,
    /// and then `invalid` is set to `name` unless an earlier field already set it.
    /// - Throws: `Failure` for a wire type other than length-prefixed (as protobuf-c).
    static func string(_ field: ScannedField, name: StaticString, invalid: inout StaticString?) throws(Failure)
        -> String
    {
        if let string = validString(try bytes(field)) { return string }
        if invalid == nil { invalid = name }
        return ""
    }

    /// Checks that `bytes` unpacks as a message whose fields are all strings (numbers in
    /// `stringFields`), as `MetadataEntry` does.
    static func validateStringsMessage(_ bytes: UnsafeRawBufferPointer, stringFields: ClosedRange<UInt32>)
        throws(Failure)
    {
        var scanner = ProtoScanner(bytes)
        while let field = try scanner.next() {
            if stringFields.contains(field.number) { _ = try Self.bytes(field) }
        }
    }
}

extension RequestFrame {
    /// What the server needs from a `RequestFrame`, read in place; the request message is
    /// `messageRange` of the decoded bytes; ``decodeMetadata(_:in:)`` reads the metadata
    /// entries when `hasMetadata`.
    ///
    /// Nothing here but the method holds a reference: the header is read on every framed
    /// call, and metadata strings in it cost retains, releases and value-witness copies per
    /// call even when there were none (callgrind, issue 21).
    public struct Header: Hashable, Sendable {
        public var callID: UInt64 = 0
        /// Interned for the known methods (no allocation).
        public var method: String = ""
        public var timeoutMilliseconds: UInt32 = 0
        public var cancel = false
        /// Where the `message` field's bytes are in the envelope (empty when absent).
        public var messageRange: Range<Int> = 0..<0
        /// Whether the envelope has a `metadata` entry (a Bool: it fits in the padding after
        /// `cancel`, the header stays smaller than it was with the metadata in it).
        public var hasMetadata = false

        public init(
            callID: UInt64 = 0, method: String = "", timeoutMilliseconds: UInt32 = 0, cancel: Bool = false,
            messageRange: Range<Int> = 0..<0, hasMetadata: Bool = false
        ) {
            self.callID = callID
            self.method = method
            self.timeoutMilliseconds = timeoutMilliseconds
            self.cancel = cancel
            self.messageRange = messageRange
            self.hasMetadata = hasMetadata
        }
    }

    /// A request's metadata entries, read by ``decodeMetadata(_:in:)``.
    public final class Metadata: Sendable {
        /// The value of the last `authorization` entry, if any (token auth).
        public let authorization: String?
        /// The other entries, in order, up to the bounds of ``CallMetadata``.
        public let entries: CallMetadata
        /// Set when the entries went past a bound of ``CallMetadata``: the call is refused
        /// with its status (the envelope itself decodes).
        public let error: MetadataError?

        init(authorization: String?, entries: CallMetadata, error: MetadataError?) {
            self.authorization = authorization
            self.entries = entries
            self.error = error
        }
    }

    /// Decodes an envelope without copying: accepts exactly the envelopes ``init(decoding:)``
    /// decodes and gives the same call id, method, timeout, cancel flag and message bytes.
    /// Metadata entries are checked structurally and only noted (`hasMetadata`):
    /// ``decodeMetadata(_:in:)`` reads them.
    ///
    /// A `method` whose bytes hold a NUL or are not valid UTF-8 (where ``init(decoding:)``
    /// throws `.badMessage` "method: ...") does not fail the envelope: it names no method,
    /// so `method` is set to a printable form of the bytes (`\0` for NUL, `\xHH` for a
    /// byte that is not UTF-8), never equal to a name of ``MethodName``, and the server
    /// answers that call UNIMPLEMENTED `unknown method "..."` (PROTOCOL.md 5.2).
    /// - Throws: ``FrameError`` `.badEnvelope`, as ``init(decoding:)``.
    public static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(FrameError) -> Header {
        // Scalars while scanning, the header built once at the end: a header variable (it holds
        // the method string) was copied and destroyed through outlined value operations.
        var callID: UInt64 = 0
        var timeoutMilliseconds: UInt32 = 0
        var cancel = false
        var messageRange = 0..<0
        var hasMetadata = false
        var methodField: UnsafeRawBufferPointer? = nil
        // The first bad occurrence of a repeated `method` field (the full decoder checks every
        // occurrence; the last one is checked by `interned`).
        var badMethod: UnsafeRawBufferPointer? = nil
        var scanner = ProtoScanner(bytes)
        do throws(ProtoScanner.Failure) {
            while let field = try scanner.next() {
                switch field.number {
                case 1: callID = try ProtoScanner.uint64(field)
                case 2:
                    if let previous = methodField, badMethod == nil, !isValidStringField(previous) {
                        badMethod = previous
                    }
                    methodField = try ProtoScanner.bytes(field)
                case 3: timeoutMilliseconds = try ProtoScanner.uint32(field)
                case 4:
                    let entry = try ProtoScanner.bytes(field)
                    try ProtoScanner.validateStringsMessage(entry, stringFields: 1...2)
                    hasMetadata = true
                case 5:
                    let data = try ProtoScanner.bytes(field)
                    var start = 0
                    if let base = bytes.baseAddress, let p = data.baseAddress { start = p - base }
                    messageRange = start..<(start + data.count)
                case 6: cancel = ProtoScanner.bool(field)
                default: break
                }
            }
        } catch {
            throw FrameError(
                code: .badEnvelope, message: "RequestFrame of \(bytes.count) bytes does not decode as protobuf")
        }
        var method = ""
        if let badMethod {
            method = MethodName.printable(badMethod)
        } else if let methodField {
            method = MethodName.interned(methodField)
        }
        return Header(
            callID: callID, method: method, timeoutMilliseconds: timeoutMilliseconds, cancel: cancel,
            messageRange: messageRange, hasMetadata: hasMetadata)
    }

    /// The metadata entries of an envelope `header` was decoded from (``decodeHeader(_:)``),
    /// read as UTF-8 (replacement characters for invalid bytes): an `authorization` entry into
    /// `authorization`, the others into `entries`, up to the bounds of ``CallMetadata`` (past
    /// them, `error`; later entries are dropped). Nil when there is no entry: nothing is read
    /// or allocated for a call without metadata.
    public static func decodeMetadata(_ header: Header, in bytes: UnsafeRawBufferPointer) -> Metadata? {
        guard header.hasMetadata else { return nil }
        var authorization: String? = nil
        var entries = CallMetadata()
        var error: MetadataError? = nil
        // The header's scan checked every field: they scan again without failing.
        var scanner = ProtoScanner(bytes)
        while let field = try? scanner.next() {
            guard field.number == 4, let entry = try? ProtoScanner.bytes(field) else { continue }
            readMetadataEntry(entry, authorization: &authorization, entries: &entries, error: &error)
        }
        return Metadata(authorization: authorization, entries: entries, error: error)
    }
}

extension RequestFrame {
    /// Reads one MetadataEntry (checked by the header's scan): `authorization` into
    /// `authorization`, any other key into `entries` (the first entry past a bound sets
    /// `error`; later ones are dropped).
    static func readMetadataEntry(
        _ entry: UnsafeRawBufferPointer, authorization: inout String?, entries: inout CallMetadata,
        error: inout MetadataError?
    ) {
        var scanner = ProtoScanner(entry)
        var key: UnsafeRawBufferPointer? = nil
        var value: UnsafeRawBufferPointer? = nil
        while let field = try? scanner.next() {
            if field.number == 1 { key = try? ProtoScanner.bytes(field) }
            if field.number == 2 { value = try? ProtoScanner.bytes(field) }
        }
        let valueString = value.map { String(decoding: $0, as: UTF8.self) } ?? ""
        if let key, key.elementsEqual("authorization".utf8) {
            authorization = valueString
            return
        }
        guard error == nil else { return }
        do throws(MetadataError) {
            try entries.append(key: key.map { String(decoding: $0, as: UTF8.self) } ?? "", value: valueString)
        } catch let bound {
            error = bound
        }
    }
}

extension MethodName {
    /// The method name in a string field's bytes, all of them, reusing the static strings
    /// for known methods. Bytes that hold a NUL or are not valid UTF-8 give their
    /// ``printable(_:)`` form, which names no method.
    static func interned(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > 0 else { return "" }
        // The hot methods first; each check is a length compare, then one memcmp against the
        // literal's UTF-8 (no array of names, no closure per name).
        if isNamed(borrow, bytes) { return borrow }
        if isNamed(returnLease, bytes) { return returnLease }
        if isNamed(prefetch, bytes) { return prefetch }
        if isNamed(stats, bytes) { return stats }
        if isNamed(watch, bytes) { return watch }
        return validString(bytes) ?? printable(bytes)
    }

    /// Whether `bytes` are exactly the UTF-8 of `name`.
    @inline(__always)
    private static func isNamed(_ name: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard name.utf8.count == bytes.count else { return false }
        let same = name.utf8.withContiguousStorageIfAvailable {
            memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
        return same ?? name.utf8.elementsEqual(bytes)
    }

    /// Bytes that are not a valid string as text: valid UTF-8 sequences as they are, NUL as
    /// `\0`, every byte of an invalid sequence as `\xHH`. Contains a backslash, which no
    /// method name has.
    static func printable(_ bytes: UnsafeRawBufferPointer) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            // The longest valid UTF-8 sequence starting at i (1...4 bytes), if any.
            var taken = 0
            for length in 1...min(4, bytes.count - i) {
                let piece = UnsafeRawBufferPointer(rebasing: bytes[i..<(i + length)])
                if bytes[i] != 0, isValidUTF8(piece) {
                    taken = length
                    break
                }
            }
            if taken > 0 {
                out += String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + taken)]), as: UTF8.self)
                i += taken
            } else {
                out +=
                    bytes[i] == 0
                    ? "\\0" : "\\x" + (bytes[i] < 16 ? "0" : "") + String(bytes[i], radix: 16, uppercase: true)
                i += 1
            }
        }
        return out
    }
}
