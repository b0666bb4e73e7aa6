import AdLoaderWire

extension FrameDecoderFuzz {
    /// The input that feeds `stream` with these settings (see the input layout above).
    static func input(
        preface: Bool, limit: Int, drain: Drain = .afterEachChunk, repeats: Int = 1, chunkSizes: [Int] = [],
        stream: [UInt8]
    ) -> [UInt8] {
        let limitIndex = limits.firstIndex(of: limit)!
        let drainBits = [Drain.afterEachChunk: 0, .oneFramePerChunk: 2, .atEnd: 3][drain]!
        let repeatIndex = Self.repeats.lastIndex(of: repeats)!
        let options = UInt8((preface ? 1 : 0) | limitIndex << 1 | drainBits << 4 | repeatIndex << 6)
        return [options, UInt8(chunkSizes.count)] + chunkSizes.map { UInt8($0) } + stream
    }

    static func frames(_ messages: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for message in messages { FrameEncoder.append(message, to: &out) }
        return out
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let small: [[UInt8]] = [[], [0], [1, 2, 3], Array(repeating: 0xAB, count: 100)]
        let borrow = RequestFrame(
            callID: 1, method: MethodName.borrow, request: BorrowRequestMessage(adUnitID: "feed", slot: "cell-7"),
            timeoutMilliseconds: 500)
        var borrowFrame: [UInt8] = []
        borrow.appendFrame(to: &borrowFrame)
        return [
            (
                "preface-frames",
                input(
                    preface: true, limit: 100, chunkSizes: [1, 2, 3, 5, 7],
                    stream: ProtocolPreface.bytes + frames(small))
            ),
            ("frames", input(preface: false, limit: 1000, chunkSizes: [4, 1], stream: frames(small))),
            ("whole", input(preface: false, limit: 100, stream: frames(small))),
            (
                "borrow-request",
                input(preface: true, limit: 4 << 20, chunkSizes: [13], stream: ProtocolPreface.bytes + borrowFrame)
            ),
            ("limit-exact", input(preface: false, limit: 16, stream: frames([Array(repeating: 7, count: 16)]))),
            ("too-large", input(preface: false, limit: 100, stream: frames([[1]]) + [0, 0, 0, 0, 101])),
            ("zero-limit", input(preface: false, limit: 0, stream: frames([[], []]) + [0, 0, 0, 0, 1, 9])),
            ("compressed", input(preface: false, limit: 100, chunkSizes: [2], stream: [1, 0, 0, 0, 1, 0])),
            ("bad-flags", input(preface: true, limit: 100, stream: ProtocolPreface.bytes + [0x80, 0, 0, 0, 0])),
            (
                "bad-preface",
                input(
                    preface: true, limit: 100, chunkSizes: [3], stream: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8))
            ),
            (
                "partial-preface",
                input(preface: true, limit: 100, chunkSizes: [1], stream: Array(ProtocolPreface.bytes[..<6]))
            ),
            (
                "partial-header",
                input(preface: false, limit: 100, chunkSizes: [0, 2], stream: frames([[5, 6]]) + [0, 0, 0])
            ),
            (
                "partial-body",
                input(preface: true, limit: 1000, stream: ProtocolPreface.bytes + [0, 0, 0, 3, 0xE8, 1, 2])
            ),
            (
                "paused-reader",
                input(preface: false, limit: 100, drain: .oneFramePerChunk, chunkSizes: [9], stream: frames(small))
            ),
            (
                "at-end",
                input(
                    preface: true, limit: 1000, drain: .atEnd, chunkSizes: [255],
                    stream: ProtocolPreface.bytes + frames(small))
            ),
            // 100 frames of 1016 bytes in chunks of 255: a chunk first ends on a frame boundary
            // after 259 KB, so the buffer is never simply emptied and, past 64 KiB, compacts.
            (
                "compaction",
                input(
                    preface: false, limit: 4 << 20, repeats: 100, chunkSizes: [255],
                    stream: frames([Array(repeating: 1, count: 1011)]))
            ),
            // 300 x (a header for 300,000 bytes + 1,000 zeros): one frame above the retained
            // buffer capacity, then empty frames, then the start of another large frame.
            (
                "large-frame",
                input(
                    preface: false, limit: 4 << 20, repeats: 300, chunkSizes: [255, 17],
                    stream: [0, 0, 0x04, 0x93, 0xE0] + Array(repeating: 0, count: 1000))
            ),
            ("empty", []),
        ]
    }
}
