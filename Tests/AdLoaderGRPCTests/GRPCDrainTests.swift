import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderGRPC

/// The gRPC transport's drain on a manual clock, with hand-written HTTP/2 frames: calls a client
/// opens before it acknowledged the drain's PING are served (the service drains only when every
/// client acknowledged, or the announce limit ended, never before).
@Suite struct GRPCDrainTests {
    let clock = ManualClock()

    struct Frame {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]
    }

    static let goAway: UInt8 = 7
    static let ping: UInt8 = 6
    static let data: UInt8 = 0
    static let headers: UInt8 = 1

    /// The service of an in-process stack (a synthetic source), a gRPC transport on it, and one
    /// client connection past its preface and SETTINGS.
    final class Harness {
        let stack: InProcessTransport
        let grpc: GRPCTransport
        let deferred = ManualDeferredWork()
        let stream = InProcessStream()
        var announced = 0
        var drained = 0
        /// What the server sent before the first call: its SETTINGS and their acknowledgement.
        var preface: [UInt8] = []
        private var nextStream: UInt32 = 1

        init(clock: ManualClock, limits: ServerLimits = ServerLimits(), http2Limits: HTTP2Limits = HTTP2Limits()) throws
        {
            var settings = SyntheticSource.Configuration()
            settings.latency = .milliseconds(100)
            let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
            stack = try InProcessTransport(
                loaders: [LoaderConfiguration(name: "default")], sources: ["synthetic": source], limits: limits,
                clock: clock)
            grpc = GRPCTransport(
                server: stack.server, http2Limits: http2Limits, clock: clock, scheduler: clock, deferred: deferred,
                logger: Logger(level: .error))
            grpc.accept(stream, peer: "127.0.0.1:1")
            stream.clientSends(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + Self.frame(4, flags: 0, stream: 0, []))
            stream.clientSends(Self.frame(4, flags: 1, stream: 0, []))  // ack of the server's SETTINGS
            settle()
            preface = stream.takeReceived()
            grpc.onAnnounced = { [unowned self] in
                announced += 1
                stack.service.beginDrain()
            }
            grpc.onDrained = { [unowned self] in drained += 1 }
        }

        func settle() {
            deferred.runPending()
            stream.clientReads()
        }

        static func frame(_ type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
            let n = payload.count
            return [
                UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
            ] + payload
        }

        /// The frames the server sent since the last call.
        func frames() -> [Frame] {
            settle()
            var bytes = stream.takeReceived()[...]
            var frames: [Frame] = []
            while bytes.count >= 9 {
                let header = Array(bytes.prefix(9))
                let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                guard bytes.count >= 9 + length else { break }
                let id =
                    UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8
                    | UInt32(header[8])
                frames.append(
                    Frame(
                        type: header[3], flags: header[4], stream: id, payload: Array(bytes.dropFirst(9).prefix(length))
                    ))
                bytes = bytes.dropFirst(9 + length)
            }
            return frames
        }

        /// Sends a Borrow (HPACK literals without indexing); returns its stream id.
        func borrow(_ adUnit: String, path: String = "/adloader.v1.NativeAdLoader/Borrow", waitMilliseconds: UInt8 = 0)
            -> UInt32
        {
            let (id, headers, data) = borrowFrames(adUnit, path: path, waitMilliseconds: waitMilliseconds)
            stream.clientSends(headers + data)
            return id
        }

        /// A Borrow's HEADERS and DATA frames, to send apart; the stream id is taken.
        func borrowFrames(
            _ adUnit: String, path: String = "/adloader.v1.NativeAdLoader/Borrow", waitMilliseconds: UInt8 = 0
        )
            -> (id: UInt32, headers: [UInt8], data: [UInt8])
        {
            let id = nextStream
            nextStream += 2
            var block: [UInt8] = []
            for (name, value) in [
                (":method", "POST"), (":scheme", "http"), (":path", path),
                (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
            ] {
                block += [0, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
            }
            var message: [UInt8] = [0x0A, UInt8(adUnit.utf8.count)] + Array(adUnit.utf8)
            if waitMilliseconds > 0 { message += [0x20, waitMilliseconds] }  // wait_ms (< 128)
            let body: [UInt8] = [0, 0, 0, 0, UInt8(message.count)] + message
            return (
                id, Self.frame(GRPCDrainTests.headers, flags: 0x4, stream: id, block),
                Self.frame(GRPCDrainTests.data, flags: 0x1, stream: id, body)
            )
        }

        func acknowledge(_ ping: Frame) {
            stream.clientSends(Self.frame(GRPCDrainTests.ping, flags: 1, stream: 0, ping.payload))
        }
    }

    /// Served: an answer message (DATA) on the stream. Refused: trailers only, no DATA.
    static func served(_ id: UInt32, in frames: [Frame]) -> Bool {
        frames.contains { $0.type == data && $0.stream == id && $0.payload.count >= 5 }
    }

    static func answered(_ id: UInt32, in frames: [Frame]) -> Bool {
        frames.contains { $0.type == headers && $0.stream == id && $0.flags & 1 != 0 }
    }

    func beginDrain(_ h: Harness) -> Frame? {
        h.grpc.beginDrain(
            status: Status(code: .unavailable, message: "server shutting down"), gracePeriod: .seconds(10),
            announceLimit: .seconds(1))
        let frames = h.frames()
        #expect(frames.map(\.type) == [Self.goAway, Self.ping])
        return frames.last
    }

    @Test func callsBeforeThePingAcknowledgementAreServedThenTheAcknowledgementDrains() throws {
        let h = try Harness(clock: clock)
        let ping = try #require(beginDrain(h))
        let early = h.borrow("early")
        let frames = h.frames()
        #expect(Self.answered(early, in: frames) && Self.served(early, in: frames))
        #expect(!frames.contains { $0.type == Self.goAway })
        #expect(h.announced == 0 && !h.stack.service.isDraining)
        // The acknowledgement ends the announce (no clock needed), then the final GOAWAY and the close.
        h.acknowledge(ping)
        let last = h.frames()
        #expect(h.announced == 1 && h.stack.service.isDraining)
        let goAway = try #require(last.first { $0.type == Self.goAway })
        #expect(Array(goAway.payload.prefix(8)) == [0, 0, 0, UInt8(early), 0, 0, 0, 0])  // last stream, NO_ERROR
        #expect(h.stream.isClosed && h.drained == 1 && h.grpc.connectionCount == 0)
    }

    /// A proxy (nginx) may write a request's HEADERS before its acknowledgement of the PING and
    /// the DATA after it: the call was started before the client knew, so it is served, and the
    /// service drains once its request is whole.
    @Test func aCallWhoseDataFollowsTheAcknowledgementIsServedBeforeTheServiceDrains() throws {
        let h = try Harness(clock: clock)
        let ping = try #require(beginDrain(h))
        let (id, headers, data) = h.borrowFrames("split")
        h.stream.clientSends(headers)
        h.acknowledge(ping)
        #expect(h.frames().isEmpty)
        #expect(h.announced == 0 && !h.stack.service.isDraining)
        h.stream.clientSends(data)
        let frames = h.frames()
        #expect(Self.answered(id, in: frames) && Self.served(id, in: frames))
        #expect(h.announced == 1 && h.stack.service.isDraining)
        #expect(h.stream.isClosed && h.drained == 1)
    }

    @Test func aClientThatNeverAcknowledgesHoldsTheServiceOneSecondAtMost() throws {
        let h = try Harness(clock: clock)
        _ = try #require(beginDrain(h))
        clock.advance(by: .milliseconds(999))
        let before = h.borrow("before")
        let first = h.frames()
        #expect(Self.served(before, in: first))
        #expect(h.announced == 0 && !h.stack.service.isDraining)
        clock.advance(by: .milliseconds(1))
        #expect(h.announced == 1 && h.stack.service.isDraining)
        let after = h.borrow("after")
        let second = h.frames()
        #expect(Self.answered(after, in: second) && !Self.served(after, in: second))  // UNAVAILABLE, trailers only
        // Unacknowledged: the connection stays until the grace period ends.
        #expect(!h.stream.isClosed && h.drained == 0)
        clock.advance(by: .milliseconds(8_999))
        #expect(!h.stream.isClosed)
        clock.advance(by: .milliseconds(1))
        #expect(h.stream.isClosed && h.drained == 1)
    }

    @Test func noConnectionAnnouncesAtOnce() throws {
        let h = try Harness(clock: clock)
        h.grpc.closeAll(reason: "test")
        h.grpc.beginDrain(
            status: Status(code: .unavailable, message: "server shutting down"), gracePeriod: .seconds(10),
            announceLimit: .seconds(1))
        #expect(h.announced == 1 && h.drained == 1)
    }
}
