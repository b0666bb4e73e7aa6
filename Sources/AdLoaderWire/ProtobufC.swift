internal import CProtobufC

// Generic helpers over protobuf-c: every generated struct starts with `ProtobufCMessage base`,
// so a pointer to it is a pointer to its base, and libprotobuf-c's generic functions apply.

/// Packs the message at `message` into a new array.
func packed<T>(_ message: UnsafeMutablePointer<T>) -> [UInt8] {
    let base = UnsafeRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    let size = protobuf_c_message_get_packed_size(base)
    return [UInt8](unsafeUninitializedCapacity: size) { out, count in
        count = size == 0 ? 0 : protobuf_c_message_pack(base, out.baseAddress!)
    }
}

/// Packs the message at `message` at the end of `buffer`; returns the number of bytes written.
@discardableResult
func appendPacked<T>(_ message: UnsafeMutablePointer<T>, to buffer: inout [UInt8]) -> Int {
    let base = UnsafeRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    let size = protobuf_c_message_get_packed_size(base)
    guard size > 0 else { return 0 }
    let start = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: size))
    let written = buffer.withUnsafeMutableBufferPointer { protobuf_c_message_pack(base, $0.baseAddress! + start) }
    precondition(written == size, "protobuf-c packed a different size than announced")
    return size
}

/// Unpacks `bytes` with a generated `..._unpack`, checks its string fields, converts with
/// `convert`, and frees the C message with the generated `..._free_unpacked` before returning.
///
/// - Throws: `code` when the bytes do not unpack; `.badMessage` naming the field when a
///   string field (at any depth) holds a NUL or invalid UTF-8 (StringValidation.swift), so
///   `convert` can read strings with `String(cString:)` and get exactly the wire bytes.
func unpacked<T, R>(
    _ bytes: UnsafeRawBufferPointer, named name: String,
    unpack: (UnsafeMutablePointer<ProtobufCAllocator>?, Int, UnsafePointer<UInt8>?) -> UnsafeMutablePointer<T>?,
    free: (UnsafeMutablePointer<T>?, UnsafeMutablePointer<ProtobufCAllocator>?) -> Void,
    code: FrameError.Code = .badMessage,
    _ convert: (UnsafeMutablePointer<T>) throws(FrameError) -> R
) throws(FrameError) -> R {
    var empty: UInt8 = 0
    let message: UnsafeMutablePointer<T>? = withUnsafePointer(to: &empty) { emptyPointer in
        let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer
        return unpack(nil, bytes.count, data)
    }
    guard let message else {
        throw FrameError(code: code, message: "\(name) of \(bytes.count) bytes does not decode as protobuf")
    }
    defer { free(message, nil) }
    let base = UnsafeRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    if let descriptor = base.pointee.descriptor { try validateStrings(bytes, descriptor: descriptor) }
    return try convert(message)
}

/// A Swift string from a C string field; nil pointers read as "".
///
/// - Important: only for messages from ``unpacked(_:named:unpack:free:code:_:)``, whose
///   string fields were checked (no NUL, valid UTF-8), so nothing is cut or repaired here.
@inline(__always)
func swiftString(_ p: UnsafePointer<CChar>?) -> String {
    guard let p else { return "" }
    return String(cString: p)
}

/// Swift strings from a repeated string field.
func swiftStrings(_ p: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, count: Int) -> [String] {
    guard let p, count > 0 else { return [] }
    return (0..<count).map { swiftString(p[$0]) }
}

/// An array from a bytes field.
func swiftBytes(_ data: ProtobufCBinaryData) -> [UInt8] {
    guard data.len > 0, let p = data.data else { return [] }
    return Array(UnsafeBufferPointer(start: p, count: data.len))
}

extension UInt32 {
    /// The value clamped to 0...UInt32.max.
    init(wire value: Int) { self = UInt32(clamping: value) }
}
