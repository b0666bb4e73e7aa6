import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderService

/// The service's rules about calls, without a transport: a recording responder and a manual clock.
@Suite struct AdLoaderServiceTests {
    let clock = ManualClock()
    let loader: NativeAdvertisementLoader
    let responder = RecordingResponder()

    init() throws {
        var configuration = LoaderConfiguration(name: "default")
        configuration.maximumRetainedAdvertisements = 2
        configuration.numberOfAdvertisements = 2
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(100)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock)
    }

    func service(_ adjust: (inout ServerLimits) -> Void = { _ in }) -> AdLoaderService {
        var limits = ServerLimits()
        adjust(&limits)
        return AdLoaderService(
            loader: loader, limits: limits, clock: clock, scheduler: clock, logger: Logger(level: .error))
    }

    // MARK: R1: identifier sizes

    @Test(arguments: [
        (ServiceRequest.borrow(BorrowRequestMessage(adUnitID: String(repeating: "a", count: 129))), "ad_unit_id", 129),
        (
            .borrow(BorrowRequestMessage(adUnitID: "feed", slot: String(repeating: "s", count: 1_000))), "slot_key",
            1_000
        ),
        (.prefetch(PrefetchRequestMessage(adUnitID: String(repeating: "é", count: 65))), "ad_unit_id", 130),
        (
            .prefetch(PrefetchRequestMessage(adUnitID: "feed", loader: String(repeating: "l", count: 129))), "loader",
            129
        ),
        (.stats(StatsRequestMessage(adUnitID: String(repeating: "a", count: 200))), "ad_unit_id", 200),
        (.watch(WatchRequestMessage(loader: String(repeating: "l", count: 300))), "loader", 300),
    ])
    func anIdentifierOverTheLimitIsRefusedNamingTheFieldAndCreatesNoPool(
        request: ServiceRequest, field: String, bytes: Int
    ) {
        let service = service()
        #expect(service.handle(request, callID: 7, timeout: nil, responder: responder) == nil)
        #expect(
            responder.take() == [
                .status(7, Status(code: .invalidArgument, message: "\(field): must be at most 128 bytes, got \(bytes)"))
            ])
        #expect(loader.stats().isEmpty, "a pool was created for a refused call")
    }

    @Test func anIdentifierAtTheLimitIsAccepted() {
        let service = service()
        let unit = String(repeating: "a", count: 128)
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: unit)), callID: 1, timeout: nil, responder: responder)
        #expect(responder.lastStatus == .ok)
        #expect(loader.stats().map(\.adUnitID) == [unit])
    }

    @Test func theIdentifierLimitIsConfigurable() {
        let service = service { $0.maxIdentifierLength = 4 }
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 1, timeout: nil, responder: responder)
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feeds")), callID: 2, timeout: nil, responder: responder)
        #expect(
            responder.take().last
                == .status(2, Status(code: .invalidArgument, message: "ad_unit_id: must be at most 4 bytes, got 5")))
    }

    // MARK: Parked borrows

    @Test func aParkedBorrowIsAnsweredWhenAnAdArrivesAndEndsTheOpenCall() throws {
        let service = service()
        let call = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 1_000)), callID: 3, timeout: nil,
                responder: responder))
        #expect(call.isParkedBorrow)
        #expect(service.parkedBorrowCount == 1)
        #expect(responder.answers.isEmpty)
        clock.advance(by: .milliseconds(100))
        #expect(service.parkedBorrowCount == 0)
        #expect(responder.ended == [3])
        guard case .borrow(3, let message)? = responder.answers.first else {
            Issue.record("no borrow answer: \(responder.answers)")
            return
        }
        #expect(message.outcome == .leased)
    }

    @Test func atTheParkedBorrowLimitABorrowThatWouldParkIsRefusedButOneThatCanBeLentIsNot() throws {
        let service = service { $0.maxParkedBorrows = 1 }
        let wait = BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 1_000)
        #expect(service.handle(.borrow(wait), callID: 1, timeout: nil, responder: responder) != nil)
        #expect(service.handle(.borrow(wait), callID: 2, timeout: nil, responder: responder) == nil)
        #expect(
            responder.take() == [
                .status(2, Status(code: .resourceExhausted, message: "parked borrows: limit of 1 reached"))
            ])
        // A wait above the loader's maximum is still INVALID_ARGUMENT at the limit (the core's check).
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 31_000)), callID: 3, timeout: nil,
            responder: responder)
        #expect(
            responder.take() == [.status(3, Status(code: .invalidArgument, message: "wait_ms: must be 0...30000 ms"))])
        // Ads arrive: the parked one is served, and at the limit a borrow that can be lent is.
        clock.advance(by: .milliseconds(100))
        _ = responder.take()
        _ = service.handle(.borrow(wait), callID: 4, timeout: nil, responder: responder)
        guard case .borrow(4, let message)? = responder.take().first else {
            Issue.record("borrow 4 was not lent")
            return
        }
        #expect(message.outcome == .leased)
    }

    @Test func aParkedBorrowPastItsDeadlineEndsDeadlineExceededAtThatInstant() throws {
        let service = service()
        var slow = SyntheticSource.Configuration()
        slow.latency = .seconds(60)
        _ = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 5_000)), callID: 9,
                timeout: .milliseconds(250), responder: responder))
        clock.advance(by: .milliseconds(99))
        #expect(responder.answers.isEmpty)
        // The ad arrives at 100 ms: served before its deadline.
        clock.advance(by: .milliseconds(1))
        #expect(responder.take().count == 1)
        // With nothing arriving (the pool is drained by borrows), a deadline ends the call.
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 10, timeout: nil, responder: responder)
        _ = responder.take()
        let parked = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "other", waitMilliseconds: 5_000)), callID: 11,
                timeout: .milliseconds(50), responder: responder))
        clock.advance(by: .milliseconds(49))
        #expect(responder.answers.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(
            responder.take() == [.status(11, Status(code: .deadlineExceeded, message: "deadline of 50 ms exceeded"))])
        #expect(responder.ended.last == 11)
        #expect(!parked.isParkedBorrow)
        #expect(service.parkedBorrowCount == 0)
    }

    @Test func aCancelledBorrowTakesNoAdAndIsAnsweredWithTheTransportsStatus() throws {
        let service = service()
        let call = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 5_000)), callID: 5, timeout: nil,
                responder: responder))
        #expect(service.end(call, answering: Status(code: .cancelled, message: "cancelled by the client")))
        #expect(!service.end(call, answering: nil), "ending twice must be a no-op")
        #expect(responder.take() == [.status(5, Status(code: .cancelled, message: "cancelled by the client"))])
        clock.advance(by: .milliseconds(100))
        #expect(responder.answers.isEmpty)
        #expect(loader.stats().first?.available == 2, "the cancelled borrow took an ad")
    }

    @Test func aBorrowServedAfterItsClientWentAwayPutsTheAdBack() throws {
        let service = service()
        _ = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 5_000)), callID: 5, timeout: nil,
                responder: responder))
        responder.isOpen = false
        clock.advance(by: .milliseconds(100))
        #expect(responder.answers.isEmpty)
        let stats = try #require(loader.stats().first)
        #expect(stats.available == 2)
        #expect(stats.leased == 0)
    }

    // MARK: Stats size (R6)

    @Test func aStatsAnswerAboveTheMessageSizeIsRefusedBeforeItIsEncoded() {
        // Three pools of about 20 bytes each and the loader's status (about 25): the whole
        // answer is above 70 bytes, one pool and the loader below.
        let service = service { $0.maxMessageSize = 150 }
        for unit in ["a", "b", "c"] {
            _ = service.handle(
                .prefetch(PrefetchRequestMessage(adUnitID: unit)), callID: 1, timeout: nil, responder: responder)
        }
        _ = responder.take()
        _ = service.handle(.stats(StatsRequestMessage()), callID: 2, timeout: nil, responder: responder)
        let answers = responder.take()
        guard case .status(2, let status)? = answers.first else {
            Issue.record("stats was answered: \(answers)")
            return
        }
        #expect(status.code == .resourceExhausted)
        let pattern = #/stats answer of (\d+) bytes exceeds the limit of 150 bytes; filter by loader or ad_unit_id/#
        let match = try? pattern.wholeMatch(in: status.message)
        let size = match.flatMap { Int($0.1) }
        // The size it reports is the size the envelope would have had.
        let full = StatsResponseMessage(pools: loader.stats(), loaders: loader.loaderStates())
        #expect(size == ResponseFrame.envelopeSize(callID: 2, messageSize: full.encoded().count))
        _ = service.handle(.stats(StatsRequestMessage(adUnitID: "b")), callID: 3, timeout: nil, responder: responder)
        guard case .stats(3, let one)? = responder.take().first else {
            Issue.record("filtered stats refused")
            return
        }
        #expect(one.pools.map(\.adUnitID) == ["b"])
    }

    @Test func theStatsSizeIsTheEncodedSize() {
        let service = service()
        for unit in ["a", "bb", String(repeating: "c", count: 100)] {
            _ = service.handle(
                .prefetch(PrefetchRequestMessage(adUnitID: unit)), callID: 1, timeout: nil, responder: responder)
        }
        clock.advance(by: .milliseconds(100))
        let message = StatsResponseMessage(pools: loader.stats())
        #expect(message.encodedSize == message.encoded().count)
        #expect(StatsResponseMessage(pools: []).encodedSize == 0)
    }

    @Test func aRequestIDInTheCallsMetadataIsAnsweredBackAndNothingElseIs() throws {
        let service = service()
        let metadata = try CallMetadata([
            ("x-adloader-affinity", "feed-1"), ("x-request-id", "a"), ("x-request-id", "b"),
        ])
        _ = service.handle(
            .stats(StatsRequestMessage()), callID: 1, timeout: nil, metadata: metadata, responder: responder)
        #expect(responder.responseMetadata[1].map { Array($0) } == [MetadataEntry(key: "x-request-id", value: "b")])
        // Refused calls carry it too (it is added before the call runs).
        let bad = try CallMetadata([("x-request-id", "c")])
        _ = service.handle(
            .stats(StatsRequestMessage(adUnitID: String(repeating: "u", count: 10_000))), callID: 2, timeout: nil,
            metadata: bad, responder: responder)
        #expect(responder.responseMetadata[2]?.value(for: "x-request-id") == "c")
        #expect(responder.lastStatus?.code == .invalidArgument)
        // Without metadata, or without the key, nothing is added.
        _ = service.handle(.stats(StatsRequestMessage()), callID: 3, timeout: nil, responder: responder)
        _ = service.handle(
            .stats(StatsRequestMessage()), callID: 4, timeout: nil, metadata: try CallMetadata([("x-other", "1")]),
            responder: responder)
        #expect(responder.responseMetadata[3] == nil && responder.responseMetadata[4] == nil)
    }

    @Test func statsNamesTheInstanceOnceSetAndCountsItInTheSizeLimit() throws {
        let service = service()
        _ = service.handle(.stats(StatsRequestMessage()), callID: 1, timeout: nil, responder: responder)
        guard case .stats(1, let before)? = responder.take().first else {
            Issue.record("stats not answered")
            return
        }
        #expect(before.instance.isEmpty)
        service.responseMetadata = try CallMetadata([(CallMetadata.instanceKey, "127.0.0.1:7421")])
        _ = service.handle(.stats(StatsRequestMessage()), callID: 2, timeout: nil, responder: responder)
        guard case .stats(2, let after)? = responder.take().first else {
            Issue.record("stats not answered")
            return
        }
        #expect(after.instance == "127.0.0.1:7421")
        // A name that makes the answer too large is refused like any large answer.
        let small = self.service { $0.maxMessageSize = 40 }
        small.responseMetadata = try CallMetadata([(CallMetadata.instanceKey, String(repeating: "n", count: 60))])
        _ = small.handle(.stats(StatsRequestMessage()), callID: 3, timeout: nil, responder: responder)
        guard case .status(3, let status)? = responder.take().first else {
            Issue.record("a too large stats answer was sent")
            return
        }
        #expect(status.code == .resourceExhausted)
    }

    // MARK: Watch

    @Test func aWatchStreamsFilteredEventsAndEndsWhenItsClientReadsTooSlowly() throws {
        let service = service { $0.maxUnsentOutputPerConnection = 1_024 }
        let call = try #require(
            service.handle(
                .watch(WatchRequestMessage(adUnitID: "feed", kinds: [.received, .leased])), callID: 4, timeout: nil,
                responder: responder))
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "other")), callID: 5, timeout: nil, responder: responder)
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 6, timeout: nil, responder: responder)
        _ = responder.take()
        clock.advance(by: .milliseconds(100))
        let events = responder.take()
        #expect(events.count == 2)
        #expect(
            events.allSatisfy {
                if case .event(4, let m) = $0 { m.event.kind == .received && m.event.adUnitID == "feed" } else { false }
            })
        // The client stops reading: the next event (a lease) ends the Watch instead of queueing.
        responder.unsentByteCount = 1_025
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 7, timeout: nil, responder: responder)
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: 8, timeout: nil, responder: responder)
        #expect(
            responder.take().filter({ if case .status = $0 { true } else { false } }) == [
                .status(
                    4,
                    Status(
                        code: .resourceExhausted,
                        message: "unsent output: limit of 1024 bytes reached; the client reads too slowly"))
            ])
        #expect(responder.ended == [4])
        #expect(!service.end(call, answering: nil))
    }

    /// A Watch opened after a start that restored pools gets one RESTORED event per restored
    /// pool first (filtered like any event), then live events; a Watch whose kinds leave
    /// RESTORED out, or a start that restored nothing, gets none.
    @Test func aWatchOpensWithTheRestoredEventsOfTheStartThenLiveEvents() throws {
        try loader.prefetch(adUnitID: "feed")
        try loader.prefetch(adUnitID: "other")
        clock.advance(by: .milliseconds(100))
        let lease = try loader.borrow(adUnitID: "feed", slot: "cell", whenServed: { _ in })
        guard case .answered(.leased) = lease else { throw TestFailure("no lease: \(lease)") }
        let suspension = loader.suspend()
        clock.advance(by: .seconds(5))
        var configuration = LoaderConfiguration(name: "default")
        configuration.maximumRetainedAdvertisements = 2
        configuration.numberOfAdvertisements = 2
        let source = try SyntheticSource(
            configuration: SyntheticSource.Configuration(), clock: clock, scheduler: clock)
        let restarted = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock, idSeed: 7)
        let restoredAt = clock.now
        restarted.restoreSuspension(suspension, from: .journal)
        clock.advance(by: .seconds(1))
        let service = AdLoaderService(
            loader: restarted, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
        // Every pool: by loader, then ad unit, stamped with the restore's time.
        _ = try #require(service.handle(.watch(WatchRequestMessage()), callID: 1, timeout: nil, responder: responder))
        let opening = responder.take().compactMap { if case .event(1, let m) = $0 { m.event } else { nil } }
        #expect(opening.map(\.kind) == [.restored, .restored])
        #expect(opening.map(\.adUnitID) == ["feed", "other"])
        #expect(opening.allSatisfy { $0.at == restoredAt && $0.loader == "default" })
        #expect(opening.map(\.count) == [2, 2])
        #expect(
            opening.map(\.restoration) == [
                AdEvent.Restoration(origin: .journal, leases: 1, expired: 0),
                AdEvent.Restoration(origin: .journal, leases: 0, expired: 0),
            ])
        // Filtered by ad unit and kind like live events.
        _ = try #require(
            service.handle(
                .watch(WatchRequestMessage(adUnitID: "other", kinds: [.restored, .leased])), callID: 2, timeout: nil,
                responder: responder))
        #expect(
            responder.take().compactMap { if case .event(2, let m) = $0 { m.event.adUnitID } else { nil } } == ["other"]
        )
        _ = try #require(
            service.handle(
                .watch(WatchRequestMessage(kinds: [.leased])), callID: 3, timeout: nil, responder: responder))
        #expect(responder.take().isEmpty)
        // Then live events.
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "other")), callID: 4, timeout: nil, responder: responder)
        let live = responder.take().compactMap {
            if case .event(let id, let m) = $0 { (id, m.event.kind) } else { nil }
        }
        #expect(live.contains { $0 == (1, .leased) } && live.contains { $0 == (2, .leased) })
        #expect(live.contains { $0 == (3, .leased) } && !live.contains { $0.1 == .restored })
        // A start that restored nothing opens a Watch with nothing.
        let fresh = self.service()
        _ = try #require(fresh.handle(.watch(WatchRequestMessage()), callID: 5, timeout: nil, responder: responder))
        #expect(responder.take().isEmpty)
    }

    // MARK: Drain

    @Test func theDrainAnswersOpenCallsAndLaterCallsUnavailable() throws {
        let service = service()
        _ = try #require(
            service.handle(
                .borrow(BorrowRequestMessage(adUnitID: "feed", waitMilliseconds: 5_000)), callID: 1, timeout: nil,
                responder: responder))
        _ = try #require(service.handle(.watch(WatchRequestMessage()), callID: 2, timeout: nil, responder: responder))
        _ = responder.take()
        service.beginDrain()
        let unavailable = Status(code: .unavailable, message: "server shutting down")
        let answers = responder.take().filter { if case .status = $0 { true } else { false } }
        #expect(answers == [.status(1, unavailable), .status(2, unavailable)])
        #expect(Set(responder.ended) == [1, 2])
        #expect(service.openCallCount == 0)
        #expect(service.parkedBorrowCount == 0)
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 3, timeout: nil, responder: responder)
        #expect(responder.take() == [.status(3, unavailable)])
    }

    // MARK: Errors

    @Test func requestsMapCoreErrorsToStatuses() {
        let service = service()
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: 0, shown: false)), callID: 1, timeout: nil, responder: responder)
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: 42, shown: false)), callID: 2, timeout: nil, responder: responder
        )
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "")), callID: 3, timeout: nil, responder: responder)
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed", loader: "nope")), callID: 4, timeout: nil,
            responder: responder)
        #expect(
            responder.take() == [
                .status(1, Status(code: .invalidArgument, message: "lease_id: must not be 0")),
                .status(2, Status(code: .notFound, message: "lease_id: lease 42 was never lent")),
                .status(3, Status(code: .invalidArgument, message: "ad_unit_id: must not be empty")),
                .status(4, Status(code: .invalidArgument, message: "loader: unknown loader \"nope\"")),
            ])
    }

    @Test func theMethodTableDecodesEveryMethodAndRefusesUnknownOnes() throws {
        for method in MethodName.all {
            #expect(ServiceRequest.isKnown(method))
            _ = try [UInt8]().withUnsafeBytes { (bytes) throws(Status) in
                try ServiceRequest(method: method, message: bytes)
            }
        }
        #expect(throws: Status(code: .unimplemented, message: "unknown method \"/x.Y/Z\"")) {
            try [UInt8]().withUnsafeBytes { (bytes) throws(Status) in
                try ServiceRequest(method: "/x.Y/Z", message: bytes)
            }
        }
        let garbage: [UInt8] = [0x0a, 0xff]
        #expect(throws: Status.self) {
            try garbage.withUnsafeBytes { (bytes) throws(Status) in
                try ServiceRequest(method: MethodName.borrow, message: bytes)
            }
        }
    }
}

/// The encodings of lent ads live only as long as the ads (issue 15: they used to outlive them).
@Suite struct EncodingLifetimeTests {
    let clock = ManualClock()

    func lentAd(
        _ service: AdLoaderService, _ server: ServerContext, _ responder: RecordingResponder, callID: UInt64
    ) throws -> Lease {
        _ = service.handle(
            .borrow(BorrowRequestMessage(adUnitID: "feed")), callID: callID, timeout: nil, responder: responder)
        let answer = responder.take().last
        guard case .borrow(_, let message)? = answer else {
            Issue.record("Borrow \(callID) was not answered with a BorrowResponse: \(String(describing: answer))")
            throw CancellationError()
        }
        let lease = try #require(message.lease)
        // What a transport does when it answers: encode through the server's cache.
        var frame: [UInt8] = []
        ResponseFrame.append(callID: callID, borrow: message, cache: server.adEncodings, to: &frame)
        return lease
    }

    @Test func anExpiredOrConsumedAdIsForgottenByTheEncodingCache() throws {
        var configuration = LoaderConfiguration(name: "default")
        configuration.maximumRetainedAdvertisements = 4
        configuration.sizing = .fixed
        configuration.minimumRemainingLife = .zero
        configuration.numberOfAdvertisements = 2
        configuration.lifetime = .seconds(30)
        configuration.sweepInterval = .seconds(2)
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(10)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock)
        let service = AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
        let server = ServerContext(service: service, limits: ServerLimits())
        let responder = RecordingResponder()
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "feed")), callID: 1, timeout: nil, responder: responder)
        clock.advance(by: .milliseconds(10))

        let consumed = try lentAd(service, server, responder, callID: 2)
        let unshown = try lentAd(service, server, responder, callID: 3)
        #expect(server.adEncodings.count == 2)
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: consumed.id, shown: true)), callID: 4, timeout: nil,
            responder: responder)
        #expect(server.adEncodings.count == 1, "a consumed ad is never lent again")
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: unshown.id, shown: false)), callID: 5, timeout: nil,
            responder: responder)
        #expect(server.adEncodings.count == 1, "an ad back in the pool may be lent again")

        clock.advance(by: .seconds(32))
        #expect(loader.stats().first?.expired ?? 0 > 0)
        #expect(server.adEncodings.count == 0, "expired ads are forgotten")
    }
}
