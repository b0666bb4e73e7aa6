import AdLoaderCore
import AdLoaderWire
import Testing

@Suite struct ResponseFrameTests {
    static let frames: [ResponseFrame] = [
        ResponseFrame(callID: 1, message: [1, 2, 3], end: true),
        ResponseFrame(callID: 1, message: [], end: true),
        ResponseFrame(callID: 2, message: [9], end: false),
        ResponseFrame(callID: 2, message: [], end: false),
        ResponseFrame(callID: 3, end: true, status: Status(code: .notFound, message: "lease 3: not found")),
        ResponseFrame(callID: UInt64.max, end: true, status: Status(code: .unauthenticated, message: "🔐 ключ")),
        ResponseFrame(callID: 0, end: true, status: Status(code: .invalidArgument, message: "bad preface")),
        ResponseFrame(callID: 4, message: Array(repeating: 0x5A, count: 1 << 20), end: true),
        ResponseFrame(callID: 5, end: true, status: Status(code: .internalError, message: Fixtures.huge)),
        ResponseFrame(callID: 127, message: Array(repeating: 1, count: 127), end: true),
        ResponseFrame(callID: 128, message: Array(repeating: 1, count: 128), end: true),
        ResponseFrame(callID: 16_384, message: Array(repeating: 1, count: 16_384), end: true),
    ]

    @Test(arguments: frames)
    func roundTrips(frame: ResponseFrame) throws {
        #expect(try AdLoaderWireTests.roundTrips(frame))
    }

    /// The hand-written fast path must produce exactly protobuf-c's bytes.
    @Test(arguments: frames)
    func appendMatchesProtobufC(frame: ResponseFrame) {
        var expected: [UInt8] = [0xEE]
        FrameEncoder.append(frame.encoded(), to: &expected)
        var fast: [UInt8] = [0xEE]
        frame.append(to: &fast)
        #expect(fast == expected)
    }

    @Test(arguments: 0..<3)
    func messageFastPathMatchesProtobufC(size: Int) throws {
        let lease = Fixtures.lease(ad: Fixtures.ad(text: String(repeating: "y", count: [0, 100, 70_000][size])))
        let message = BorrowResponseMessage(outcome: .leased, lease: lease)
        for end in [true, false] {
            var fast: [UInt8] = [1, 2]
            ResponseFrame.append(callID: 77, message: message, end: end, to: &fast)
            var expected: [UInt8] = [1, 2]
            ResponseFrame(callID: 77, message: message.encoded(), end: end).append(to: &expected)
            #expect(fast == expected)
        }
        // A message that encodes to zero bytes leaves the field out.
        var empty: [UInt8] = []
        ResponseFrame.append(callID: 1, message: ReturnResponseMessage(outcome: nil), to: &empty)
        #expect(empty == [0, 0, 0, 0, 4, 0x08, 0x01, 0x18, 0x01])
        let decoded = try ResponseFrame(decoding: empty[5...])
        #expect(decoded.message == [])
        #expect(try ReturnResponseMessage(decoding: decoded.message!) == ReturnResponseMessage(outcome: nil))
    }

    @Test func statusFastPath() throws {
        var out: [UInt8] = []
        ResponseFrame.append(callID: 3, status: Status(code: .notFound, message: "x"), to: &out)
        var expected: [UInt8] = []
        FrameEncoder.append(
            ResponseFrame(callID: 3, end: true, status: Status(code: .notFound, message: "x")).encoded(), to: &expected)
        #expect(out == expected)
    }

    @Test func unknownStatusReadsAsUnknown() throws {
        // call_id 1, end true, status 99, message "new"
        let bytes: [UInt8] = [0x08, 0x01, 0x18, 0x01, 0x20, 99, 0x2A, 3, 0x6E, 0x65, 0x77]
        let frame = try ResponseFrame(decoding: bytes)
        #expect(frame.status == Status(code: .unknown, message: "new"))
        #expect(frame.message == nil)
    }

    @Test func statusIsIgnoredWithoutEnd() throws {
        let bytes: [UInt8] = [0x08, 0x01, 0x12, 0x01, 0x07, 0x20, 5]
        let frame = try ResponseFrame(decoding: bytes)
        #expect(frame.status == .ok)
        #expect(frame.message == [7])
        #expect(!frame.end)
    }
}
