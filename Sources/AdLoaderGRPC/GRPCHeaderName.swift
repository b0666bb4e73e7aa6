/// The request header fields the gRPC transport reads, recognised from the name's bytes as
/// nghttp2 hands them over (lower case, as HTTP/2 requires): no string per header field.
enum GRPCHeaderName: Equatable {
    case path
    case method
    case contentType
    case encoding
    case timeout
    case authorization
    /// Any other field (`:scheme`, `:authority`, `te`, `user-agent`, metadata): not used.
    case other

    init(_ name: UnsafeBufferPointer<UInt8>) {
        switch name.count {
        case 5 where Self.bytesEqual(name, Self.pathName.bytes): self = .path
        case 7 where Self.bytesEqual(name, Self.methodName.bytes): self = .method
        case 12 where Self.bytesEqual(name, Self.contentTypeName.bytes): self = .contentType
        case 13 where Self.bytesEqual(name, Self.encodingName.bytes): self = .encoding
        case 12 where Self.bytesEqual(name, Self.timeoutName.bytes): self = .timeout
        case 13 where Self.bytesEqual(name, Self.authorizationName.bytes): self = .authorization
        default: self = .other
        }
    }

    private static let pathName = KnownBytes(":path")
    private static let methodName = KnownBytes(":method")
    private static let contentTypeName = KnownBytes("content-type")
    private static let encodingName = KnownBytes("grpc-encoding")
    private static let timeoutName = KnownBytes("grpc-timeout")
    private static let authorizationName = KnownBytes("authorization")

    /// Whether `a` holds exactly the bytes of `b`.
    @inline(__always)
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        b.withUnsafeBufferPointer { bytesEqual(a, $0) }
    }

    /// Whether `a` holds exactly the bytes of `b`, compared eight at a time (the generic
    /// `elementsEqual` went byte by byte through iterators: ~3.7k instructions per gRPC call
    /// over the header names and the path, callgrind).
    @inline(__always)
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress else { return true }
        let left = UnsafeRawPointer(x)
        let right = UnsafeRawPointer(y)
        var i = 0
        while i + 8 <= a.count {
            if left.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != right.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        while i < a.count {
            if left.load(fromByteOffset: i, as: UInt8.self) != right.load(fromByteOffset: i, as: UInt8.self) {
                return false
            }
            i += 1
        }
        return true
    }
}

/// Bytes the transport compares header fields with (known names, paths, values), copied once
/// into memory that lives as long as the process: compared through a plain pointer, with no
/// reference counting of an array's storage per comparison (each was a retain and a release).
struct KnownBytes: @unchecked Sendable {
    // @unchecked Sendable: the memory is written once, in init, and never again nor freed;
    // every thread may read it.
    let bytes: UnsafeBufferPointer<UInt8>

    init(_ text: String) {
        let utf8 = Array(text.utf8)
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(utf8.count, 1))
        _ = storage.initialize(from: utf8)
        bytes = UnsafeBufferPointer(rebasing: storage[0..<utf8.count])
    }
}
