import AdLoaderCore
import AdLoaderService
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderFramed

/// The framed transport's clocked behaviour — idle and partial-frame timeouts, back-pressure,
/// drain, deadlines — on the in-process transport and a manual clock: each at the instant it
/// is due, never before. The end-to-end tests check the same against the real binary.
@Suite struct InProcessTransportTests {
    let clock = ManualClock()

    func stack(_ adjust: (inout ServerLimits) -> Void = { _ in }, latency: Duration = .milliseconds(100)) throws
        -> InProcessTransport
    {
        var limits = ServerLimits()
        adjust(&limits)
        var feed = LoaderConfiguration(name: "default")
        feed.maximumRetainedAdvertisements = 4
        feed.numberOfAdvertisements = 2
        var settings = SyntheticSource.Configuration()
        settings.latency = latency
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        return try InProcessTransport(loaders: [feed], sources: ["synthetic": source], limits: limits, clock: clock)
    }

    // MARK: Timeouts

    @Test func anIdleConnectionIsClosedAtTheIdleTimeoutAndNotBefore() throws {
        let stack = try stack { $0.idleTimeout = .seconds(300) }
        let client = stack.connect()
        client.sendPreface()
        stack.advance(by: .milliseconds(299_999))
        #expect(try client.frames().isEmpty)
        #expect(!client.isClosed)
        stack.advance(by: .milliseconds(1))
        let frames = try client.frames()
        #expect(frames.map(\.callID) == [0])
        #expect(frames.first?.status == Status(code: .unavailable, message: "idle for 300 s"))
        #expect(client.isClosed)
        #expect(stack.transport.connectionCount == 0)
    }

    @Test func anOpenCallKeepsAConnectionFromIdlingAndIdlenessCountsFromWhenItEnds() throws {
        let stack = try stack({ $0.idleTimeout = .seconds(10) }, latency: .seconds(60))
        let client = stack.connect()
        client.sendPreface()
        let watch = client.start(MethodName.watch, WatchRequestMessage(adUnitID: "nothing"))
        stack.advance(by: .seconds(30))
        #expect(!client.isClosed)
        stack.advance(by: .seconds(5))
        client.cancel(watch)
        #expect(try client.frames().map(\.status.code) == [.cancelled])
        stack.advance(by: .milliseconds(9_999))
        #expect(!client.isClosed)
        stack.advance(by: .milliseconds(1))
        #expect(client.isClosed)
    }

    @Test func aPartialFrameIsClosedAtItsTimeoutAndACompletedFrameRestartsTheClock() throws {
        let stack = try stack { $0.partialFrameTimeout = .seconds(10) }
        let client = stack.connect()
        client.sendPreface()
        var frame: [UInt8] = []
        RequestFrame(callID: 1, method: MethodName.stats, request: StatsRequestMessage()).appendFrame(to: &frame)
        var next: [UInt8] = []
        RequestFrame(callID: 2, method: MethodName.stats, request: StatsRequestMessage()).appendFrame(to: &next)
        // Half a frame, then at 9 s the rest with half of the next: the clock restarts at 9 s.
        client.send(Array(frame.prefix(4)))
        stack.advance(by: .seconds(9))
        client.send(Array(frame.dropFirst(4)) + Array(next.prefix(3)))
        #expect(try client.frames().map(\.callID) == [1])
        stack.advance(by: .milliseconds(9_999))
        #expect(!client.isClosed)
        stack.advance(by: .milliseconds(1))
        let frames = try client.frames()
        #expect(
            frames.map(\.status) == [
                Status(code: .deadlineExceeded, message: "partial frame not completed within 10 s")
            ])
        #expect(client.isClosed)
    }

    /// A loop that ran late fires its timers before it reads: the rest of a frame that arrived
    /// during the stall, unread when the deadline passes, keeps the connection open.
    @Test func aPartialFrameCompletedDuringALoopStallIsReadNotTimedOut() throws {
        let stack = try stack { $0.partialFrameTimeout = .seconds(10) }
        let client = stack.connect()
        client.sendPreface()
        var frame: [UInt8] = []
        RequestFrame(callID: 1, method: MethodName.stats, request: StatsRequestMessage()).appendFrame(to: &frame)
        client.send(Array(frame.prefix(4)))
        stack.advance(by: .milliseconds(9_000))
        client.stream.clientSendsDuringAStall(Array(frame.dropFirst(4)))
        stack.advance(by: .milliseconds(1_000))
        #expect(!client.isClosed && client.stream.hasUnreadInput)
        client.stream.loopPolls()
        stack.advance(by: .milliseconds(1))
        #expect(try client.frames().map(\.callID) == [1])
        #expect(!client.isClosed)
        // Nothing unread: the same silence closes at its deadline.
        client.send(Array(frame.prefix(4)))
        stack.advance(by: .seconds(10))
        #expect(try client.frames().map(\.status.code) == [.deadlineExceeded])
        #expect(client.isClosed)
    }

    @Test func aMissingPrefaceTimesOutLikeAPartialFrame() throws {
        let stack = try stack { $0.partialFrameTimeout = .seconds(2) }
        let client = stack.connect()
        client.send(Array(ProtocolPreface.bytes.prefix(5)))
        stack.advance(by: .milliseconds(1_999))
        #expect(!client.isClosed)
        stack.advance(by: .milliseconds(1))
        #expect(try client.frames().map(\.status.code) == [.deadlineExceeded])
        #expect(client.receivedPreface, "the server answers in its protocol before closing")
        #expect(client.isClosed)
    }

    // MARK: Deadlines

    @Test func aParkedBorrowEndsDeadlineExceededAtItsDeadline() throws {
        let stack = try stack(latency: .seconds(60))
        let client = stack.connect()
        client.sendPreface()
        let call = client.start(
            MethodName.borrow, BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 30_000),
            timeoutMilliseconds: 1_500)
        stack.advance(by: .milliseconds(1_499))
        #expect(try client.frames().isEmpty)
        #expect(stack.service.parkedBorrowCount == 1)
        stack.advance(by: .milliseconds(1))
        let frames = try client.frames()
        #expect(frames.map(\.callID) == [call])
        #expect(frames.first?.status == Status(code: .deadlineExceeded, message: "deadline of 1500 ms exceeded"))
        #expect(stack.service.parkedBorrowCount == 0)
        // The id is free again: reusing it is not ALREADY_EXISTS.
        client.start(MethodName.stats, StatsRequestMessage(), callID: call)
        #expect(try client.frames().map(\.status.code) == [.ok])
    }

    // MARK: Back-pressure

    @Test func aClientThatDoesNotReadIsNotReadUntilItDrainsAndEveryCallIsAnswered() throws {
        let stack = try stack { $0.maxUnsentOutputPerConnection = 1_024 }
        let client = stack.connect(window: 0)
        client.sendPreface()
        var batch: [UInt8] = []
        for id in 1...200 as ClosedRange<UInt64> {
            RequestFrame(
                callID: id, method: MethodName.prefetch, request: PrefetchRequestMessage(adUnitID: "feed-\(id % 5)")
            )
            .appendFrame(to: &batch)
        }
        client.send(batch)
        // Answers above 1 KiB wait: the server stopped reading and handling this client's calls.
        #expect(!client.stream.isReading)
        let queued = client.stream.queuedWriteBytes
        #expect(queued > 1_024)
        #expect(queued < 1_024 + 200, "calls kept being handled while the client did not read")
        // The client reads everything: reading resumes, the rest is handled, nothing is lost.
        var answered: [UInt64] = []
        for _ in 0..<20 where answered.count < 200 {
            client.stream.clientReads()
            stack.settle()
            answered += try client.frames().map(\.callID)
        }
        #expect(answered == Array(1...200))
        #expect(client.stream.isReading)
        #expect(!client.isClosed)
    }

    @Test func aPausedClientIsNotClosedForAPartialFrameTheServerHasNotRead() throws {
        let stack = try stack {
            $0.maxUnsentOutputPerConnection = 1_024
            $0.partialFrameTimeout = .seconds(1)
        }
        let client = stack.connect(window: 0)
        client.sendPreface()
        var batch: [UInt8] = []
        for id in 1...100 as ClosedRange<UInt64> {
            RequestFrame(callID: id, method: MethodName.prefetch, request: PrefetchRequestMessage(adUnitID: "feed"))
                .appendFrame(to: &batch)
        }
        client.send(Array(batch.dropLast(3)))
        #expect(!client.stream.isReading)
        stack.advance(by: .seconds(30))
        #expect(!client.isClosed, "closed for a frame the server itself left unread")
        client.stream.clientReads()
        stack.settle()
        // Now the last frame is incomplete on the client's side: its clock runs.
        _ = try client.frames()
        stack.advance(by: .seconds(1))
        #expect(client.isClosed)
    }

    // MARK: Drain

    @Test func theDrainAnswersOpenCallsAnnouncesOnCallZeroAndClosesWhenTheClientDoes() throws {
        let stack = try stack(latency: .seconds(60))
        let client = stack.connect()
        client.sendPreface()
        let parked = client.start(MethodName.borrow, BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 30_000))
        let watch = client.start(MethodName.watch, WatchRequestMessage())
        _ = try client.frames()
        var drained = false
        stack.transport.onDrained = { drained = true }
        stack.service.beginDrain()
        stack.transport.beginDrain(
            status: Status(code: .unavailable, message: "server shutting down"), gracePeriod: .seconds(10))
        stack.settle()
        let unavailable = Status(code: .unavailable, message: "server shutting down")
        let ends = try client.frames().filter(\.end)
        #expect(ends.map(\.callID) == [parked, watch, 0])
        #expect(ends.allSatisfy { $0.status == unavailable })
        // Calls still arriving are answered UNAVAILABLE; new connections are refused.
        client.start(MethodName.stats, StatsRequestMessage())
        #expect(try client.frames().map(\.status) == [unavailable])
        let late = stack.connect()
        late.sendPreface()
        #expect(late.isClosed)
        #expect(!drained)
        client.stream.clientClosesSending()
        stack.settle()
        #expect(client.isClosed)
        #expect(drained)
    }

    @Test func theDrainClosesAClientThatStaysAtTheEndOfTheGracePeriod() throws {
        let stack = try stack()
        let client = stack.connect()
        client.sendPreface()
        var drained = false
        stack.transport.onDrained = { drained = true }
        stack.service.beginDrain()
        stack.transport.beginDrain(
            status: Status(code: .unavailable, message: "server shutting down"), gracePeriod: .seconds(10))
        stack.advance(by: .milliseconds(9_999))
        #expect(!client.isClosed)
        #expect(!drained)
        stack.advance(by: .milliseconds(1))
        #expect(client.isClosed)
        #expect(drained)
    }

    // MARK: Limits of the transport

    @Test func connectionsOverTheLimitAreRefusedWithAStatus() throws {
        let stack = try stack { $0.maxConnections = 1 }
        let first = stack.connect()
        first.sendPreface()
        let second = stack.connect()
        #expect(second.isClosed)
        #expect(
            try second.frames().map(\.status) == [
                Status(code: .resourceExhausted, message: "connections: limit of 1 reached")
            ])
        #expect(!first.isClosed)
    }

    @Test func aDuplicateCallIDEndsTheOpenCallAndIsAlreadyExists() throws {
        let stack = try stack(latency: .seconds(60))
        let client = stack.connect()
        client.sendPreface()
        client.start(MethodName.borrow, BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 30_000), callID: 7)
        client.start(MethodName.stats, StatsRequestMessage(), callID: 7)
        #expect(
            try client.frames().map(\.status) == [
                Status(code: .alreadyExists, message: "call_id: 7 is already in flight")
            ])
        #expect(stack.service.parkedBorrowCount == 0)
    }
}
