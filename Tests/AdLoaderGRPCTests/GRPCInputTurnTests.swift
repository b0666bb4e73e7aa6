import AdLoaderTestSupport
import Testing

@testable import AdLoaderGRPC

/// One connection's input is worked on in turns (``HTTP2Limits/inputBytesPerTurn``,
/// ``HTTP2Limits/headerWorkPerTurn``): what one read brought beyond a turn waits, the
/// connection stops reading, and another connection's call is answered before the next turn
/// (issue 28: a flood on one connection delays a neighbour by one turn, not by all it sent).
@Suite struct GRPCInputTurnTests {
    let clock = ManualClock()

    static func limits(work: Int = HTTP2Limits().headerWorkPerTurn, bytes: Int = HTTP2Limits().inputBytesPerTurn)
        -> HTTP2Limits
    {
        var limits = HTTP2Limits()
        limits.headerWorkPerTurn = work
        limits.inputBytesPerTurn = bytes
        return limits
    }

    /// A second client connection on the harness's transport, past its preface.
    static func neighbour(of h: GRPCDrainTests.Harness) -> InProcessStream {
        let stream = InProcessStream()
        h.grpc.accept(stream, peer: "127.0.0.1:2")
        stream.clientSends(
            Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + GRPCDrainTests.Harness.frame(4, flags: 0, stream: 0, []))
        stream.clientSends(GRPCDrainTests.Harness.frame(4, flags: 1, stream: 0, []))
        stream.clientReads()
        _ = stream.takeReceived()
        return stream
    }

    static func frames(_ bytes: [UInt8]) -> [GRPCDrainTests.Frame] {
        var rest = bytes[...]
        var frames: [GRPCDrainTests.Frame] = []
        while rest.count >= 9 {
            let header = Array(rest.prefix(9))
            let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            guard rest.count >= 9 + length else { break }
            let id =
                UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
            frames.append(
                GRPCDrainTests.Frame(
                    type: header[3], flags: header[4], stream: id, payload: Array(rest.dropFirst(9).prefix(length))))
            rest = rest.dropFirst(9 + length)
        }
        return frames
    }

    @Test func requestsBeyondOneTurnWaitWithoutReadingAndAreAllServed() throws {
        // A Borrow is one stream (16) and 6 header fields: 2 per turn of 44.
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: Self.limits(work: 44))
        var ids: [UInt32] = []
        var burst: [UInt8] = []
        for _ in 0..<10 {
            let (id, headers, data) = h.borrowFrames("feed")
            ids.append(id)
            burst += headers + data
        }
        h.stream.clientSends(burst)
        // The first turn took two requests; the rest waits and the connection does not read.
        #expect(!h.stream.isReading)
        #expect(h.deferred.isRequested)
        let frames = h.frames()  // the loop iterations: one turn each
        for id in ids { #expect(GRPCDrainTests.served(id, in: frames), "stream \(id)") }
        #expect(h.stream.isReading)
        #expect(!frames.contains { $0.type == GRPCDrainTests.goAway })
    }

    @Test func aNeighbourIsAnsweredBetweenTheTurnsOfAFloodingConnection() throws {
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: Self.limits(work: 44))
        let neighbour = Self.neighbour(of: h)
        var flood: [UInt8] = []
        var last: UInt32 = 0
        for _ in 0..<50 {
            let (id, headers, data) = h.borrowFrames("feed")
            flood += headers + data
            last = id
        }
        h.stream.clientSends(flood)
        // The neighbour's Borrow arrives while 48 of the flood's wait: answered in its own read.
        let (_, headers, data) = h.borrowFrames("feed")
        neighbour.clientSends(Self.rebased(headers + data, to: 1))  // its connection's stream 1
        neighbour.clientReads()
        #expect(GRPCDrainTests.served(1, in: Self.frames(neighbour.takeReceived())))
        h.stream.clientReads()
        #expect(!GRPCDrainTests.served(last, in: Self.frames(h.stream.takeReceived())))
        // One loop iteration: one more turn of the flood, not all of it.
        h.deferred.runOnce()
        h.stream.clientReads()
        #expect(!GRPCDrainTests.served(last, in: Self.frames(h.stream.takeReceived())))
        #expect(GRPCDrainTests.served(last, in: h.frames()))
    }

    @Test func aRequestSplitAcrossByteTurnsIsServed() throws {
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: Self.limits(bytes: 16))
        let id = h.borrow("feed")
        #expect(!h.stream.isReading)
        #expect(GRPCDrainTests.served(id, in: h.frames()))
        #expect(h.stream.isReading)
    }

    @Test func aConnectionClosedWhileInputWaitsDropsIt() throws {
        let h = try GRPCDrainTests.Harness(clock: clock, http2Limits: Self.limits(work: 44))
        var burst: [UInt8] = []
        for _ in 0..<10 {
            let (_, headers, data) = h.borrowFrames("feed")
            burst += headers + data
        }
        h.stream.clientSends(burst)
        #expect(h.grpc.connectionCount == 1)
        h.grpc.closeAll(reason: "test")
        h.deferred.runPending()  // the waiting turns find the connection closed
        #expect(h.grpc.connectionCount == 0)
        #expect(h.stack.service.openCallCount == 0)
    }

    /// An HPACK literal field without indexing (RFC 7541 6.2.2), lengths as HPACK integers.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        func length(_ n: Int) -> [UInt8] {
            guard n >= 127 else { return [UInt8(n)] }
            var out: [UInt8] = [127]
            var rest = n - 127
            while rest >= 128 {
                out.append(UInt8(rest % 128 + 128))
                rest /= 128
            }
            return out + [UInt8(rest)]
        }
        return [0] + length(name.utf8.count) + Array(name.utf8) + length(value.utf8.count) + Array(value.utf8)
    }

    @Test func aHeaderListFarOverTheLimitEndsTheConnectionWithoutDecodingTheRest() throws {
        let h = try GRPCDrainTests.Harness(clock: clock)
        var block: [UInt8] = []
        for (name, value) in [
            (":method", "POST"), (":scheme", "http"), (":path", "/adloader.v1.NativeAdLoader/Borrow"),
            (":authority", "localhost"), ("content-type", "application/grpc"),
        ] {
            block += Self.literal(name, value)
        }
        // 9000 bytes: over the 8 KiB list, a request merely too big; 9000 more: far over.
        block += Self.literal("x-a", String(repeating: "a", count: 9000))
        block += Self.literal("x-b", String(repeating: "b", count: 9000))
        let first = Array(block.prefix(16384))
        let rest = Array(block.dropFirst(16384))
        h.stream.clientSends(
            GRPCDrainTests.Harness.frame(GRPCDrainTests.headers, flags: 0x1, stream: 1, first)
                + GRPCDrainTests.Harness.frame(9, flags: 0x4, stream: 1, rest))
        let goAway = h.frames().first { $0.type == GRPCDrainTests.goAway }
        #expect(goAway?.payload[4..<8] == [0, 0, 0, 11][...])  // ENHANCE_YOUR_CALM
        #expect(h.grpc.connectionCount == 0)
    }

    /// `bytes` (one stream's frames) with its stream id replaced by `id`.
    static func rebased(_ bytes: [UInt8], to id: UInt32) -> [UInt8] {
        var out = bytes
        var offset = 0
        while offset + 9 <= out.count {
            let length = Int(out[offset]) << 16 | Int(out[offset + 1]) << 8 | Int(out[offset + 2])
            out[offset + 5] = UInt8(id >> 24 & 0x7F)
            out[offset + 6] = UInt8(id >> 16 & 0xFF)
            out[offset + 7] = UInt8(id >> 8 & 0xFF)
            out[offset + 8] = UInt8(id & 0xFF)
            offset += 9 + length
        }
        return out
    }
}
