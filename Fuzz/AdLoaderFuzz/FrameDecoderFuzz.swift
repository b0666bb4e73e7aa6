import AdLoaderWire

/// Fuzzes ``FrameDecoder``: the stream is fed whole, byte by byte and in chunks whose sizes
/// come from the input, read with `next()` and `withNextMessage` alternately, drained after
/// every chunk or left holding whole frames (a paused reader). Each way must give exactly the
/// frames and the error of a small reference decoder written from PROTOCOL.md (section 3):
/// no message above the limit, errors sticky, `hasIncompleteFrame` and `hasPartialFrame`
/// true exactly when they should be at every step, the same error text every way, and no
/// buffer above ``FrameDecoder/retainedCapacity`` kept once the frame that needed it is taken.
///
/// Input layout: `[options] [k] [k chunk sizes] [stream...]`; options bit 0 = expect the
/// preface, bits 1-3 = limit (``limits``), bits 4-5 = drain mode, bits 6-7 = how many times
/// the stream is repeated (``repeats``: past 64 KiB the decoder compacts its buffer, past
/// 256 KiB a frame makes it grow beyond ``FrameDecoder/retainedCapacity`` and give the memory
/// back once consumed; inputs are at most 1 KiB: `Fuzz/run.sh` sets `-max_len=1024`).
public enum FrameDecoderFuzz: FuzzTarget {
    public static let name = "frame-decoder"

    static let limits = [0, 1, 4, 5, 16, 100, 1000, 4 << 20]
    static let repeats = [1, 2, 100, 300]
    /// Byte-by-byte feeding is compared on streams up to this size (it is slow on big ones).
    static let byteByByteLimit = 16 * 1024

    enum Drain: CaseIterable {
        case afterEachChunk, oneFramePerChunk, atEnd
    }

    struct Plan {
        var expectingPreface = false
        var limit = 100
        var drain = Drain.afterEachChunk
        var chunkSizes: [Int] = []
        var stream: [UInt8] = []
    }

    static func plan(_ input: UnsafeRawBufferPointer) -> Plan {
        var plan = Plan()
        guard input.count >= 2 else {
            plan.stream = Array(input)
            return plan
        }
        let options = input[0]
        plan.expectingPreface = options & 1 != 0
        plan.limit = limits[Int(options >> 1) & 7]
        plan.drain = [.afterEachChunk, .afterEachChunk, .oneFramePerChunk, .atEnd][Int(options >> 4) & 3]
        let sizeCount = min(Int(input[1] & 0x0F), input.count - 2)
        plan.chunkSizes = input[2..<(2 + sizeCount)].map { Int($0) }
        let data = input[(2 + sizeCount)...]
        for _ in 0..<repeats[Int(options >> 6)] { plan.stream += data }
        return plan
    }

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let plan = plan(input)
        let expected = ReferenceDecoder(plan.stream, limit: plan.limit, expectingPreface: plan.expectingPreface)
        let sizes = chunkSizes(plan.chunkSizes, streamCount: plan.stream.count)
        var feeds: [(String, [Int])] = [("whole", []), ("chunks \(sizes)", sizes)]
        if plan.stream.count <= byteByByteLimit { feeds.append(("byte by byte", [1])) }
        var firstError: (feed: String, error: FrameError)? = nil
        for (feed, sizes) in feeds {
            let error = try run(plan, sizes: sizes, expected: expected, feed: feed)
            if let error {
                if let firstError {
                    try require(
                        firstError.error == error,
                        "\(feed) threw \"\(error)\" but \(firstError.feed) threw \"\(firstError.error)\"")
                } else {
                    firstError = (feed, error)
                }
            }
        }
    }

    /// The input's chunk sizes, scaled up on streams longer than ``byteByByteLimit`` by how many
    /// times longer they are: a 300 KiB stream (a repeated input) in chunks of a few bytes cost
    /// ~100 k steps of checks, most of the target's time, and reaches no state the first 16 KiB
    /// did not; compaction past 64 KiB and growth past 256 KiB happen at any chunk size.
    ///
    /// A 0 stays 0 (an append of nothing, checked like any other), but a run of them (counted
    /// cyclically) becomes one: the empty appends after the first reach no new state and were
    /// half of the target's time (an input of fourteen 0 sizes made 14 steps per byte fed).
    /// Sizes that are all 0 become `[0, scale]`, so the feed still makes progress.
    static func chunkSizes(_ sizes: [Int], streamCount: Int) -> [Int] {
        let scale = max(1, streamCount / byteByByteLimit)
        guard sizes.contains(where: { $0 != 0 }) else { return sizes.isEmpty ? [] : [0, scale] }
        return sizes.indices.compactMap { i in
            let size = sizes[i]
            let previous = sizes[(i + sizes.count - 1) % sizes.count]
            return size == 0 ? (previous == 0 ? nil : 0) : size * scale
        }
    }

    /// Feeds the stream in chunks of `sizes` (cycled; 0 appends nothing; empty = whole) and
    /// checks every step against `expected`. Returns the error the decoder threw, if any.
    static func run(_ plan: Plan, sizes: [Int], expected: ReferenceDecoder, feed: String) throws(FuzzFailure)
        -> FrameError?
    {
        var decoder = FrameDecoder(maximumMessageSize: plan.limit, expectingPreface: plan.expectingPreface)
        let stream = plan.stream
        var appended = 0
        var taken = 0  // frames returned
        var calls = 0
        var thrown: FrameError? = nil
        var sizeIndex = 0
        var copiedOnce = false

        func check(_ step: @autoclosure () -> String) throws(FuzzFailure) {
            try require(
                decoder.hasPartialFrame == (decoder.bufferedByteCount > 0),
                "\(feed), \(step()): hasPartialFrame \(decoder.hasPartialFrame) with \(decoder.bufferedByteCount) bytes buffered"
            )
            let incomplete = expected.isIncomplete(appended: appended, taken: taken)
            try require(
                decoder.hasIncompleteFrame == incomplete,
                "\(feed), \(step()): hasIncompleteFrame is \(decoder.hasIncompleteFrame), expected \(incomplete) "
                    + "(\(appended) bytes appended, \(taken) frames taken, \(decoder.bufferedByteCount) buffered)")
        }

        /// One call of next() or withNextMessage; false when it returned no frame.
        func takeOne() throws(FuzzFailure) -> Bool {
            calls += 1
            let result: Result<[UInt8]?, FrameError>
            if calls % 2 == 0 {
                result = Result { () throws(FrameError) in try decoder.next() }
            } else {
                result = Result { () throws(FrameError) in try decoder.withNextMessage { Array($0) } }
            }
            switch result {
            case .success(let frame?):
                try require(thrown == nil, "\(feed): a frame after the error \"\(thrown!)\"")
                try require(
                    frame.count <= plan.limit, "\(feed): a frame of \(frame.count) bytes above the limit \(plan.limit)")
                try require(
                    taken < expected.frames.count,
                    "\(feed): frame \(taken) returned, the stream holds \(expected.frames.count)")
                let range = expected.frames[taken]
                try require(
                    frame[...] == stream[range],
                    "\(feed): frame \(taken) is \(hex(frame)), expected \(hex(stream[range]))")
                try require(
                    range.upperBound <= appended, "\(feed): frame \(taken) returned before all its bytes arrived")
                taken += 1
                try require(
                    !plan.expectingPreface || decoder.prefaceReceived,
                    "\(feed): a frame before the preface was received")
                let consumed = range.upperBound
                try require(
                    decoder.bufferedByteCount == appended - consumed,
                    "\(feed): \(decoder.bufferedByteCount) bytes buffered after frame \(taken - 1), expected \(appended - consumed)"
                )
                try check("after frame \(taken - 1)")
                // R2: memory a large frame needed is given back once it is consumed, unless
                // most of a retained buffer's worth is still unread.
                try require(
                    decoder.bufferCapacity <= FrameDecoder.retainedCapacity
                        || decoder.bufferedByteCount > FrameDecoder.retainedCapacity / 2,
                    "\(feed): a buffer of \(decoder.bufferCapacity) bytes kept after frame \(taken - 1) "
                        + "with \(decoder.bufferedByteCount) bytes unread")
                return true
            case .success(nil):
                try require(thrown == nil, "\(feed): nil after the error \"\(thrown!)\"")
                try require(
                    taken == expected.frames.count || expected.frames[taken].upperBound > appended,
                    "\(feed): nil although frame \(taken) is whole (\(appended) bytes appended)")
                try require(
                    !expected.errorDetected(appended: appended, taken: taken),
                    "\(feed): nil although the bytes appended hold \(expected.error!.code)")
                try check("after nil")
                return false
            case .failure(let error):
                if let thrown {
                    try require(error == thrown, "\(feed): threw \"\(error)\" after \"\(thrown)\" (errors must repeat)")
                    return false
                }
                try require(
                    expected.errorDetected(appended: appended, taken: taken) && expected.error?.code == error.code,
                    "\(feed): threw \"\(error)\" after \(taken) frames with \(appended) bytes appended; the reference "
                        + (expected.error.map { "throws \($0.code) once \($0.detectedAt) bytes are here" }
                            ?? "never throws"))
                thrown = error
                try check("after the error")
                return false
            }
        }

        while appended < stream.count {
            // ``chunkSizes(_:streamCount:)`` holds a size above 0 in every cycle (or is empty).
            let size = sizes.isEmpty ? stream.count : sizes[sizeIndex % sizes.count]
            sizeIndex += 1
            // Once the decoder has thrown, the rest goes in at once: the error must repeat
            // whatever follows, and checking that after every byte only slows the fuzzer.
            let end = thrown == nil ? min(stream.count, appended + size) : stream.count
            switch sizeIndex % 8 {
            case 0 where !copiedOnce && (2...16).contains(end - appended):
                // Not contiguous: the copying path, once per feed (it copies into an array and
                // appends that as any other chunk; unspecialized, it allocates for every byte:
                // 40 % of the target's time when every eighth chunk took it).
                copiedOnce = true
                decoder.append(stream[appended..<end].lazy.map { $0 })
            case 1, 3, 5: decoder.append(stream[appended..<end])
            default: stream[appended..<end].withUnsafeBytes { decoder.append($0) }
            }
            appended = end
            try check("after appending \(appended) bytes")
            switch plan.drain {
            case .afterEachChunk: while try takeOne() {}
            case .oneFramePerChunk: _ = try takeOne()
            case .atEnd: break
            }
        }
        while try takeOne() {}
        _ = try takeOne()  // once more: an error must repeat, a wait must stay a wait
        try require(
            taken == expected.frames.count,
            "\(feed): \(taken) frames returned, the reference decodes \(expected.frames.count)")
        try require(
            (thrown == nil) == (expected.error == nil),
            "\(feed): threw \(thrown.map { "\($0)" } ?? "nothing"), the reference \(expected.error.map { "\($0.code)" } ?? "nothing")"
        )
        if thrown == nil {
            let consumed = expected.frames.last?.upperBound ?? (expected.expectingPreface ? min(12, stream.count) : 0)
            try require(
                decoder.bufferedByteCount == stream.count - consumed,
                "\(feed): \(decoder.bufferedByteCount) bytes left buffered, expected \(stream.count - consumed)")
        }
        return thrown
    }
}

/// A frame decoder written straight from PROTOCOL.md section 3 over a whole stream: the
/// 12-byte preface when expected, then frames of flags (0), a 4-byte big-endian length
/// (at most the limit) and the body. Knows, for every prefix of the stream, what a decoder
/// that has seen it must say.
struct ReferenceDecoder {
    struct Failure {
        var code: FrameError.Code
        /// The stream offset at which the error can be seen (once this many bytes are here).
        var detectedAt: Int
        /// The index of the frame whose header is bad (0 for the preface).
        var frameIndex: Int
        var inPreface: Bool
    }

    let expectingPreface: Bool
    /// Where each whole frame's body is in the stream.
    var frames: [Range<Int>] = []
    /// Where each frame (whole or not) starts; one more entry than `frames` when the stream
    /// ends inside a frame or its header.
    var frameStarts: [Int] = []
    var error: Failure? = nil
    /// The preface bytes that match, from the start (12 when it is whole or not expected).
    var prefaceMatched = 12

    init(_ stream: [UInt8], limit: Int, expectingPreface: Bool) {
        self.expectingPreface = expectingPreface
        var offset = 0
        if expectingPreface {
            prefaceMatched = 0
            while prefaceMatched < 12 && prefaceMatched < stream.count {
                guard stream[prefaceMatched] == ProtocolPreface.bytes[prefaceMatched] else {
                    error = Failure(code: .badPreface, detectedAt: prefaceMatched + 1, frameIndex: 0, inPreface: true)
                    return
                }
                prefaceMatched += 1
            }
            if prefaceMatched < 12 { return }
            offset = 12
        }
        while offset < stream.count {
            frameStarts.append(offset)
            guard stream.count - offset >= 5 else { return }
            let flags = stream[offset]
            let length = stream[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            let code: FrameError.Code? =
                flags == 1
                ? .compressedNotSupported : flags != 0 ? .badEnvelope : length > limit ? .messageTooLarge : nil
            if let code {
                error = Failure(code: code, detectedAt: offset + 5, frameIndex: frames.count, inPreface: false)
                return
            }
            guard stream.count - offset - 5 >= length else { return }
            frames.append((offset + 5)..<(offset + 5 + length))
            offset += 5 + length
        }
    }

    /// Whether a decoder that has been given `appended` bytes and returned `taken` frames
    /// would throw on the next call.
    func errorDetected(appended: Int, taken: Int) -> Bool {
        guard let error else { return false }
        return appended >= error.detectedAt && taken == error.frameIndex
    }

    /// Whether the next frame after `taken` (or the preface) has started in the first
    /// `appended` bytes but is not whole, and no error is in sight.
    func isIncomplete(appended: Int, taken: Int) -> Bool {
        if errorDetected(appended: appended, taken: taken) { return false }
        if expectingPreface && appended < 12 { return appended > 0 }
        if taken < frames.count { return frames[taken].upperBound > appended && frameStarts[taken] < appended }
        guard taken < frameStarts.count else { return false }
        return frameStarts[taken] < appended
    }
}
