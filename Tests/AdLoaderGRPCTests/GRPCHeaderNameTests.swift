import Testing

@testable import AdLoaderGRPC

/// Request header fields recognised on their bytes, and the byte comparison under them.
@Suite struct GRPCHeaderNameTests {
    static func name(_ text: String) -> GRPCHeaderName {
        Array(text.utf8).withUnsafeBufferPointer { GRPCHeaderName($0) }
    }

    @Test(arguments: [
        (":path", GRPCHeaderName.path), (":method", .method), ("content-type", .contentType),
        ("grpc-encoding", .encoding), ("grpc-timeout", .timeout), ("authorization", .authorization),
        (":authority", .other), ("te", .other), ("", .other), (":pat", .other), (":paths", .other),
        ("content-typf", .other), ("Content-Type", .other), ("grpc-timeouT", .other),
    ])
    func namesAreRecognised(_ text: String, _ expected: GRPCHeaderName) {
        #expect(Self.name(text) == expected)
    }

    @Test func bytesEqualComparesEveryByteAtEveryLength() {
        for length in 0...20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
            bytes.withUnsafeBufferPointer { a in #expect(GRPCHeaderName.bytesEqual(a, bytes)) }
            for position in 0..<length {
                var other = bytes
                other[position] ^= 0x20
                bytes.withUnsafeBufferPointer { a in #expect(!GRPCHeaderName.bytesEqual(a, other)) }
            }
            bytes.withUnsafeBufferPointer { a in #expect(!GRPCHeaderName.bytesEqual(a, bytes + [0])) }
        }
    }

    @Test func knownPathsAndTheGRPCContentTypeNeedNoNewString() {
        let borrow = Array("/adloader.v1.NativeAdLoader/Borrow".utf8).withUnsafeBufferPointer {
            GRPCConnection.path($0)
        }
        #expect(borrow.0 == "/adloader.v1.NativeAdLoader/Borrow" && borrow.1 == .service)
        let health = Array("/grpc.health.v1.Health/Check".utf8).withUnsafeBufferPointer { GRPCConnection.path($0) }
        #expect(health.1 == .healthCheck)
        let unknown = Array("/adloader.v1.NativeAdLoader/Borrov".utf8).withUnsafeBufferPointer {
            GRPCConnection.path($0)
        }
        #expect(unknown.0 == "/adloader.v1.NativeAdLoader/Borrov" && unknown.1 == nil)
    }
}
