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
        case 5 where Self.equals(name, Self.pathName): self = .path
        case 7 where Self.equals(name, Self.methodName): self = .method
        case 12 where Self.equals(name, Self.contentTypeName): self = .contentType
        case 13 where Self.equals(name, Self.encodingName): self = .encoding
        case 12 where Self.equals(name, Self.timeoutName): self = .timeout
        case 13 where Self.equals(name, Self.authorizationName): self = .authorization
        default: self = .other
        }
    }

    private static let pathName = Array(":path".utf8)
    private static let methodName = Array(":method".utf8)
    private static let contentTypeName = Array("content-type".utf8)
    private static let encodingName = Array("grpc-encoding".utf8)
    private static let timeoutName = Array("grpc-timeout".utf8)
    private static let authorizationName = Array("authorization".utf8)

    private static func equals(_ name: UnsafeBufferPointer<UInt8>, _ known: [UInt8]) -> Bool {
        bytesEqual(name, known)
    }

    /// Whether `a` holds exactly the bytes of `b`, compared eight at a time (the generic
    /// `elementsEqual` went byte by byte through iterators: ~3.7k instructions per gRPC call
    /// over the header names and the path, callgrind).
    @inline(__always)
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress else { return true }
        return b.withUnsafeBufferPointer { other in
            let left = UnsafeRawPointer(x)
            let right = UnsafeRawPointer(other.baseAddress!)
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
}
