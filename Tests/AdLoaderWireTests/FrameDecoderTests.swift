import AdLoaderWire
import Testing

@Suite struct FrameDecoderTests {
    static let messages: [[UInt8]] = [[], [0], [1, 2, 3], Array(repeating: 0xAB, count: 1000), Array(0...255)]

    static func stream(_ messages: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for m in messages { FrameEncoder.append(m, to: &out) }
        return out
    }

    /// Feeds `bytes` in chunks of `chunk` and collects every message.
    static func decode(_ bytes: [UInt8], chunk: Int, limit: Int = 1 << 22, preface: Bool = false) throws -> [[UInt8]] {
        var decoder = FrameDecoder(maximumMessageSize: limit, expectingPreface: preface)
        var out: [[UInt8]] = []
        var i = 0
        while i < bytes.count {
            let end = min(i + chunk, bytes.count)
            decoder.append(bytes[i..<end])
            while let m = try decoder.next() { out.append(m) }
            i = end
        }
        #expect(!decoder.hasPartialFrame)
        #expect(decoder.bufferedByteCount == 0)
        return out
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 13, 64, 1000, 1 << 20])
    func decodesAnyChunking(chunk: Int) throws {
        let bytes = Self.stream(Self.messages)
        #expect(try Self.decode(bytes, chunk: chunk) == Self.messages)
    }

    @Test(arguments: [1, 5, 12, 100])
    func checksPrefaceThenFrames(chunk: Int) throws {
        let bytes = ProtocolPreface.bytes + Self.stream(Self.messages)
        #expect(try Self.decode(bytes, chunk: chunk, preface: true) == Self.messages)
    }

    @Test func prefaceIsTwelveASCIIBytes() {
        #expect(ProtocolPreface.bytes == Array("ADLOADER/1\r\n".utf8))
        #expect(ProtocolPreface.bytes.count == 12)
        #expect(ProtocolPreface.count == 12)
    }

    @Test(arguments: [
        Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8), Array("ADLOADER/2\r\n".utf8), Array("GET / HTTP/1.1\r\n".utf8),
        [0, 0, 0, 0, 5],
    ])
    func rejectsWrongPrefaceAtTheFirstWrongByte(bytes: [UInt8]) {
        var decoder = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        decoder.append(bytes)
        #expect(throws: FrameError.self) { try decoder.next() }
        do {
            _ = try decoder.next()
            Issue.record("must keep throwing")
        } catch {
            #expect(error.code == .badPreface)
        }
    }

    @Test func partialPrefaceNeedsMore() throws {
        var decoder = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        decoder.append(ProtocolPreface.bytes[0..<5])
        #expect(try decoder.next() == nil)
        #expect(!decoder.prefaceReceived)
        decoder.append(ProtocolPreface.bytes[5...])
        #expect(try decoder.next() == nil)
        #expect(decoder.prefaceReceived)
        #expect(!decoder.hasPartialFrame)
    }

    @Test func manyFramesInOneBuffer() throws {
        let many = (0..<5000).map { i in [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: i % 37) }
        #expect(try Self.decode(Self.stream(many), chunk: 1 << 30) == many)
        #expect(try Self.decode(Self.stream(many), chunk: 4093) == many)
    }

    @Test func splitPrefixReportsPartialFrame() throws {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append([0, 0, 0])
        #expect(try decoder.next() == nil)
        #expect(decoder.hasPartialFrame)
        #expect(decoder.bufferedByteCount == 3)
        decoder.append([0, 2, 9])
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 6)
        decoder.append([8])
        #expect(try decoder.next() == [9, 8])
        #expect(!decoder.hasPartialFrame)
    }

    /// `hasIncompleteFrame` is true exactly when next() returns nil with bytes buffered;
    /// `hasPartialFrame` keeps meaning "bytes buffered" (whole frames not taken included).
    @Test func incompleteFrameMeansNextWaitsForBytes() throws {
        var decoder = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        #expect(!decoder.hasIncompleteFrame)
        decoder.append(ProtocolPreface.bytes[..<4])
        #expect(decoder.hasIncompleteFrame && decoder.hasPartialFrame)
        decoder.append(ProtocolPreface.bytes[4...])
        #expect(!decoder.hasIncompleteFrame && decoder.hasPartialFrame)
        #expect(try decoder.next() == nil)
        #expect(!decoder.hasIncompleteFrame && !decoder.hasPartialFrame)
        // Two whole frames buffered, not taken yet: nothing incomplete, yet "partial" as before.
        decoder.append(Self.stream([[1, 2], [3]]))
        #expect(!decoder.hasIncompleteFrame)
        #expect(decoder.hasPartialFrame && decoder.bufferedByteCount == 13)
        #expect(try decoder.next() == [1, 2])
        #expect(!decoder.hasIncompleteFrame)
        // A whole frame then half of the next prefix, then half of a body.
        decoder.append([0, 0])
        #expect(!decoder.hasIncompleteFrame)
        #expect(try decoder.next() == [3])
        #expect(decoder.hasIncompleteFrame)
        decoder.append([0, 0, 3, 7])
        #expect(decoder.hasIncompleteFrame)
        #expect(try decoder.next() == nil)
        decoder.append([8, 9])
        #expect(!decoder.hasIncompleteFrame && decoder.hasPartialFrame)
        #expect(try decoder.next() == [7, 8, 9])
        #expect(!decoder.hasIncompleteFrame && !decoder.hasPartialFrame)
        // Bytes next() would throw on are not "waiting for more".
        var bad = decoder
        bad.append([1, 0, 0, 0, 9])
        #expect(!bad.hasIncompleteFrame)
        bad = decoder
        bad.append([0, 0, 0, 0, 101])
        #expect(!bad.hasIncompleteFrame)
        var wrongPreface = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        wrongPreface.append(Array("ADLX".utf8))
        #expect(!wrongPreface.hasIncompleteFrame)
        // The preface and the start of a frame arriving together.
        var joined = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        joined.append(ProtocolPreface.bytes + [0, 0, 0, 0, 2, 1])
        #expect(joined.hasIncompleteFrame)
        joined.append(ProtocolPreface.bytes[..<0] + [5])
        #expect(!joined.hasIncompleteFrame)
    }

    /// Found by the frame-decoder fuzz target (Fuzz/corpus/frame-decoder/seed-partial-preface):
    /// once next() had checked the bytes of a partial preface, none were buffered and
    /// `hasIncompleteFrame` said false, although the preface had started and was not whole.
    @Test func partialPrefaceTakenByNextIsStillIncomplete() throws {
        var decoder = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        decoder.append(ProtocolPreface.bytes[..<6])
        #expect(decoder.hasIncompleteFrame)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0 && !decoder.prefaceReceived)
        #expect(decoder.hasIncompleteFrame)
        decoder.append(ProtocolPreface.bytes[6...])
        #expect(try decoder.next() == nil)
        #expect(decoder.prefaceReceived && !decoder.hasIncompleteFrame)
        // A wrong byte after the part already taken is an error, not a wait.
        var wrong = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        wrong.append(ProtocolPreface.bytes[..<3])
        #expect(try wrong.next() == nil)
        wrong.append([0x58])
        #expect(!wrong.hasIncompleteFrame)
    }

    /// On random cuts of valid and damaged streams: incomplete exactly when next() waits with bytes buffered.
    @Test(arguments: 0..<20)
    func incompleteFrameMatchesNext(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed) &+ 300)
        var bytes = ProtocolPreface.bytes + Self.stream(Self.messages.filter { $0.count < 90 })
        if seed % 4 == 3 {
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
        }
        var decoder = FrameDecoder(maximumMessageSize: 100, expectingPreface: true)
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + Int.random(in: 1...9, using: &generator))
            decoder.append(bytes[i..<end])
            i = end
            while true {
                let incomplete = decoder.hasIncompleteFrame
                let buffered = decoder.bufferedByteCount
                let result = Result { () throws(FrameError) in try decoder.next() }
                switch result {
                case .success(.some): #expect(!incomplete)
                case .success(.none):
                    // Waiting: on the rest of a preface, or on bytes of a started frame.
                    let started = !decoder.prefaceReceived || decoder.bufferedByteCount > 0
                    #expect(incomplete == (buffered > 0 && started))
                case .failure:
                    #expect(!incomplete)
                    return  // a damaged stream stops here
                }
                guard case .success(.some) = result else { break }
            }
        }
    }

    @Test func withNextMessageDoesNotCopy() throws {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Self.stream([[1, 2], [3]]))
        #expect(try decoder.withNextMessage { Array($0) } == [1, 2])
        #expect(try decoder.withNextMessage { $0.count } == 1)
        #expect(try decoder.withNextMessage { $0.count } == nil)
    }

    @Test(arguments: [0, 1, 100, 4 << 20])
    func limitExactlyAtIsAcceptedOneAboveIsNot(limit: Int) throws {
        var atLimit = FrameDecoder(maximumMessageSize: limit)
        let body = [UInt8](repeating: 7, count: limit)
        atLimit.append(Self.stream([body]))
        #expect(try atLimit.next() == body)

        var above = FrameDecoder(maximumMessageSize: limit)
        // Only the prefix: the error must come before the body arrives.
        var prefix: [UInt8] = []
        FrameEncoder.appendPrefix(length: limit + 1, to: &prefix)
        above.append(prefix)
        do {
            _ = try above.next()
            Issue.record("accepted a message above the limit")
        } catch {
            #expect(error.code == .messageTooLarge)
            #expect(error.message.contains("\(limit + 1)"))
            #expect(error.message.contains("\(limit)"))
            #expect(error.status.code == .resourceExhausted)
        }
    }

    @Test(arguments: [
        (UInt32(Int32.max), 4 << 20), (UInt32(Int32.max) + 1, 4 << 20), (UInt32.max, 4 << 20),
        (UInt32.max, Int(Int32.max)),
    ])
    func extremeLengthsAreRejectedWithoutAllocating(length: UInt32, limit: Int) {
        var decoder = FrameDecoder(maximumMessageSize: limit)
        decoder.append([
            0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
        ])
        #expect(
            throws: FrameError(
                code: .messageTooLarge, message: "message of \(length) bytes exceeds the limit of \(limit) bytes")
        ) {
            try decoder.next()
        }
    }

    @Test func extremeLengthWithinAHugeLimitWaitsForTheBody() throws {
        var decoder = FrameDecoder(maximumMessageSize: Int(UInt32.max))
        decoder.append([0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        #expect(try decoder.next() == nil)
        #expect(decoder.hasPartialFrame)
        #expect(decoder.bufferedByteCount == 8)
    }

    @Test(arguments: [UInt8(1), 2, 0x80, 0xFF])
    func rejectsNonZeroFlags(flags: UInt8) {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append([flags, 0, 0, 0, 1, 42])
        do {
            _ = try decoder.next()
            Issue.record("accepted flags \(flags)")
        } catch {
            #expect(error.code == (flags == 1 ? .compressedNotSupported : .badEnvelope))
        }
    }

    @Test(arguments: 0..<200)
    func garbageThrowsOrReturnsNeverCrashes(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed))
        let bytes = [UInt8].random(count: Int.random(in: 0...600, using: &rng), using: &rng)
        var decoder = FrameDecoder(maximumMessageSize: 256, expectingPreface: seed % 2 == 0)
        var offset = 0
        do {
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 1...64, using: &rng))
                decoder.append(bytes[offset..<end])
                offset = end
                while let message = try decoder.next() { #expect(message.count <= 256) }
            }
        } catch {
            #expect(!error.message.isEmpty)
        }
    }

    /// R2: a large frame's buffer is given back once the frame is consumed, so an idle
    /// connection that once sent one does not keep megabytes.
    @Test(arguments: [0, 3])
    func givesBackALargeFramesBufferOnceItIsConsumed(nextFrameBytes: Int) throws {
        var decoder = FrameDecoder(maximumMessageSize: 4 << 20)
        let large = [UInt8](repeating: 0x5A, count: 4 << 20)
        // The large frame, then (optionally) the start of a small one in the same stream.
        let small: [UInt8] = [1, 2, 3]
        let bytes = Self.stream([large, small])
        let end = Self.stream([large]).count + nextFrameBytes
        var offset = 0
        while offset < end {
            let next = min(end, offset + 64 * 1024)
            decoder.append(bytes[offset..<next])
            offset = next
            if offset < end { #expect(try decoder.next() == nil) }
        }
        #expect(decoder.bufferCapacity > FrameDecoder.retainedCapacity, "the large frame needed a large buffer")
        #expect(try decoder.next() == large)
        #expect(decoder.bufferCapacity <= FrameDecoder.retainedCapacity)
        #expect(decoder.bufferedByteCount == nextFrameBytes)
        decoder.append(bytes[end...])
        #expect(try decoder.next() == small)
        #expect(decoder.bufferedByteCount == 0)
    }

    /// Small frames pipelined in 64 KiB reads that end inside frames: the buffer reaches its
    /// working size and then neither shrinks nor regrows (no reallocation per frame).
    @Test func smallFramesKeepOneBuffer() throws {
        var decoder = FrameDecoder(maximumMessageSize: 4 << 20)
        let frames = (0..<40_000).map { i in [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 20 + i % 300) }
        let bytes = Self.stream(frames)
        #expect(bytes.count > 80 * 64 * 1024)
        var capacities: [Int] = []
        var decoded = 0
        var offset = 0
        while offset < bytes.count {
            let next = min(bytes.count, offset + 64 * 1024)
            decoder.append(bytes[offset..<next])
            offset = next
            while let message = try decoder.next() {
                #expect(message == frames[decoded])
                decoded += 1
            }
            capacities.append(decoder.bufferCapacity)
        }
        #expect(decoded == frames.count)
        #expect(capacities.max()! <= FrameDecoder.retainedCapacity)
        // After the first few reads, one capacity for the rest of the stream.
        #expect(Set(capacities.dropFirst(4)).count == 1, "capacity changed: \(Set(capacities))")
    }

    /// Large and small frames mixed, cut at any size: every frame decodes intact.
    @Test(arguments: [1000, 4093, 64 * 1024, 1 << 20])
    func largeAndSmallFramesMixedDecodeIntact(chunk: Int) throws {
        let frames: [[UInt8]] = [
            [1], Array(repeating: 2, count: 300 * 1024), [3, 3], Array(repeating: 4, count: 1 << 20), [], [5],
            Array(repeating: 6, count: 200 * 1024),
        ]
        #expect(try Self.decode(Self.stream(frames), chunk: chunk) == frames)
    }

    @Test func compactsAfterLongStreams() throws {
        // 200k small frames fed 3 at a time keep the buffer bounded.
        var decoder = FrameDecoder(maximumMessageSize: 64)
        let chunk = Self.stream([[1, 2, 3], [4], []])
        var count = 0
        for _ in 0..<50_000 {
            decoder.append(chunk[0..<7])
            while try decoder.next() != nil { count += 1 }
            decoder.append(chunk[7...])
            while try decoder.next() != nil { count += 1 }
        }
        #expect(count == 150_000)
        #expect(decoder.bufferedByteCount == 0)
    }
}
