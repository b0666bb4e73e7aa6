#if canImport(Glibc)
    import Glibc
#endif

// Hand-written protobuf encoding for the answers on the server's hot path (BorrowResponse,
// ReturnResponse). It writes exactly the bytes protobuf-c packs from the same values (the
// tests compare both on many inputs), without building C structs, copying strings into an
// arena, or sizing and packing through libprotobuf-c's descriptor walk.
//
// protobuf-c's rules for proto3 fields, mirrored here: fields go out in field-number order;
// a scalar is written when nonzero (a double when `!= 0`, so -0.0 is not written); a string
// is written when its C string is non-empty, and a C string ends at the first NUL; a
// sub-message is written whenever present, even when empty; every element of a repeated
// string is written, empty ones included.

/// Byte counts of protobuf encodings.
enum ProtoSize {
    @inline(__always)
    static func varint(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// The number of UTF-8 bytes of `string` before its first NUL (what a C string holds).
    @inline(__always)
    static func cStringLength(_ string: String) -> Int {
        let length = string.utf8.withContiguousStorageIfAvailable { utf8 -> Int in
            guard let base = utf8.baseAddress, utf8.count > 0 else { return 0 }
            guard let nul = memchr(base, 0, utf8.count) else { return utf8.count }
            return UnsafeRawPointer(nul) - UnsafeRawPointer(base)
        }
        return length ?? string.utf8.prefix { $0 != 0 }.count
    }

    /// A length-delimited field of `length` bytes, key included.
    @inline(__always)
    static func delimited(key: UInt64, _ length: Int) -> Int {
        varint(key) + varint(UInt64(length)) + length
    }

    /// A proto3 string field: nothing when the C string is empty.
    @inline(__always)
    static func string(key: UInt64, _ string: String) -> Int {
        let length = cStringLength(string)
        return length == 0 ? 0 : delimited(key: key, length)
    }

    /// A proto3 varint field: nothing when zero.
    @inline(__always)
    static func varintField(key: UInt64, _ value: UInt64) -> Int {
        value == 0 ? 0 : varint(key) + varint(value)
    }
}

/// Writes protobuf bytes into memory the caller sized with ``ProtoSize``.
struct ProtoWriter {
    private(set) var cursor: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { cursor = start }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        cursor.pointee = value
        cursor += 1
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            cursor.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            cursor += 1
            v >>= 7
        }
        cursor.pointee = UInt8(v)
        cursor += 1
    }

    @inline(__always)
    mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        UnsafeMutableRawPointer(cursor).copyMemory(from: base, byteCount: bytes.count)
        cursor += bytes.count
    }

    /// The key, the length, then `string`'s UTF-8 up to its first NUL; `always` writes an
    /// empty string too (repeated fields).
    @inline(__always)
    mutating func string(key: UInt64, _ string: String, always: Bool = false) {
        let length = ProtoSize.cStringLength(string)
        guard length > 0 || always else { return }
        varint(key)
        varint(UInt64(length))
        guard length > 0 else { return }
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            cursor.update(from: utf8.baseAddress!, count: length)
        }
        if copied == nil {
            for (i, byte) in string.utf8.prefix(length).enumerated() { cursor[i] = byte }
        }
        cursor += length
    }

    /// A proto3 varint field: nothing when zero.
    @inline(__always)
    mutating func varintField(key: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        varint(key)
        varint(value)
    }

    /// The 5-byte gRPC message prefix (flags 0, big-endian `length`) followed by a
    /// ResponseFrame's `call_id` field (omitted for call 0, as protobuf-c omits defaults).
    @inline(__always)
    mutating func responseFrameHeader(length: Int, callID: UInt64) {
        byte(0)
        byte(UInt8(truncatingIfNeeded: UInt32(length) >> 24))
        byte(UInt8(truncatingIfNeeded: UInt32(length) >> 16))
        byte(UInt8(truncatingIfNeeded: UInt32(length) >> 8))
        byte(UInt8(truncatingIfNeeded: UInt32(length)))
        if callID != 0 {
            byte(0x08)
            varint(callID)
        }
    }

    /// A proto3 double field (wire type 1): nothing when `== 0`.
    @inline(__always)
    mutating func doubleField(key: UInt64, _ value: Double) {
        guard value != 0 else { return }
        varint(key)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) {
            cursor.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 8)
        }
        cursor += 8
    }
}

extension Array where Element == UInt8 {
    /// The largest `count` that ``appendWritten(count:_:)`` writes on the stack first.
    static var smallWriteLimit: Int { 128 }

    /// Appends exactly `count` bytes written by `write` (which must write all of them).
    ///
    /// Up to ``smallWriteLimit`` bytes (frame headers, Return answers, status frames) are
    /// written into stack memory and appended with one copy; zero-filling the array's tail
    /// first (the path for larger writes) cost more than the copy.
    @inline(__always)
    mutating func appendWritten(count: Int, _ write: (inout ProtoWriter) -> Void) {
        guard count > 0 else { return }
        if count <= Self.smallWriteLimit {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.smallWriteLimit) { scratch in
                var writer = ProtoWriter(scratch.baseAddress!)
                write(&writer)
                precondition(writer.cursor == scratch.baseAddress! + count, "hand encoder wrote a different size")
                append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<count]))
            }
            return
        }
        let start = self.count
        append(contentsOf: repeatElement(0, count: count))
        withUnsafeMutableBufferPointer { buffer in
            var writer = ProtoWriter(buffer.baseAddress! + start)
            write(&writer)
            precondition(writer.cursor == buffer.baseAddress! + start + count, "hand encoder wrote a different size")
        }
    }
}
