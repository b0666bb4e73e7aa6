import AdLoaderWire
import Testing

@Suite struct RequestFrameTests {
    static let frames: [RequestFrame] = [
        RequestFrame(callID: 1, method: MethodName.borrow, message: BorrowRequestMessage(adUnitID: "u").encoded()),
        RequestFrame(callID: UInt64.max, method: MethodName.watch, timeoutMilliseconds: UInt32.max),
        RequestFrame(
            callID: 42, method: MethodName.prefetch, timeoutMilliseconds: 250,
            metadata: [
                MetadataEntry(key: "authorization", value: "Bearer 123"), MetadataEntry(key: "x-trace", value: "🧭"),
                MetadataEntry(key: "", value: ""),
            ], message: Array(0...255)),
        RequestFrame.cancel(callID: 3),
        RequestFrame(callID: 0),
        RequestFrame(callID: 5, method: "/unknown.Service/Method"),
        RequestFrame(callID: 6, method: Fixtures.huge, message: Array(repeating: 0, count: 1 << 20)),
    ]

    @Test(arguments: frames)
    func roundTrips(frame: RequestFrame) throws {
        #expect(try AdLoaderWireTests.roundTrips(frame))
    }

    @Test(arguments: Fixtures.strings)
    func unicodeMetadataAndMethods(text: String) throws {
        let frame = RequestFrame(callID: 2, method: text, metadata: [MetadataEntry(key: text, value: text)])
        #expect(try RequestFrame(decoding: frame.encoded()) == frame)
    }

    @Test func knownMethodsDecodeToTheSameNames() throws {
        for name in MethodName.all {
            let decoded = try RequestFrame(decoding: RequestFrame(callID: 1, method: name).encoded())
            #expect(decoded.method == name)
        }
        #expect(MethodName.returnLease == "/adloader.v1.NativeAdLoader/Return")
        // A known name's prefix or extension is not mistaken for it.
        for name in [MethodName.borrow + "x", String(MethodName.borrow.dropLast())] {
            #expect(try RequestFrame(decoding: RequestFrame(callID: 1, method: name).encoded()).method == name)
        }
    }

    @Test func convenienceInitEncodesTheRequest() throws {
        let request = ReturnRequestMessage(leaseID: 9, shown: true)
        let frame = RequestFrame(callID: 4, method: MethodName.returnLease, request: request, timeoutMilliseconds: 10)
        #expect(try ReturnRequestMessage(decoding: frame.message) == request)
        #expect(frame.timeoutMilliseconds == 10)
    }

    @Test func appendFrameWritesPrefixAndEnvelope() throws {
        let frame = Self.frames[2]
        var out: [UInt8] = [9]
        frame.appendFrame(to: &out)
        var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
        decoder.append(out[1...])
        let body = try #require(try decoder.next())
        #expect(try RequestFrame(decoding: body) == frame)
    }

    @Test(arguments: [[0xFF], [0x0A, 0x05, 0x61], [0x08], Array(repeating: 0xFF, count: 11)] as [[UInt8]])
    func undecodableIsBadEnvelope(bytes: [UInt8]) {
        do {
            _ = try RequestFrame(decoding: bytes)
            Issue.record("decoded garbage")
        } catch {
            #expect(error.code == .badEnvelope)
        }
    }

    @Test(arguments: 0..<300)
    func garbageThrowsOrReturns(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed) &+ 1000)
        let bytes = [UInt8].random(count: Int.random(in: 0...200, using: &rng), using: &rng)
        _ = try? RequestFrame(decoding: bytes)
        _ = try? ResponseFrame(decoding: bytes)
    }
}
