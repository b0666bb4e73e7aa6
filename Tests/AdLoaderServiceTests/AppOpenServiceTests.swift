import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Testing

@testable import AdLoaderService

/// AppOpen through the service: decision, lease, counts that move only on a shown Return,
/// store outages, bad input; with the in-memory store and a manual clock.
@Suite struct AppOpenServiceTests {
    let clock = ManualClock(start: AdInstant(unixMilliseconds: 1_796_119_200_000))  // 2026-12-01T10:00Z
    let loader: NativeAdvertisementLoader
    let responder = RecordingResponder()
    let store = InMemoryCapStore()

    init() throws {
        var splash = LoaderConfiguration(name: "splash")
        splash.format = .appOpen
        splash.maximumRetainedAdvertisements = 3
        splash.numberOfAdvertisements = 3
        splash.appOpen.maximumShowsPerDay = 2
        splash.appOpen.maximumShowsPerSession = 5
        var feed = LoaderConfiguration(name: "default")
        feed.maximumRetainedAdvertisements = 1
        var settings = SyntheticSource.Configuration()
        settings.latency = .milliseconds(10)
        let source = try SyntheticSource(configuration: settings, clock: clock, scheduler: clock)
        loader = try NativeAdvertisementLoader(
            loaders: [splash, feed], sources: ["synthetic": source], clock: clock, scheduler: clock)
    }

    func service(outage: CapStoreOutageMode = .refuse) -> AdLoaderService {
        AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error),
            capStore: store, capStoreOutageMode: outage)
    }

    static func call(
        _ event: AppOpenEvent = .launch, device: String = "dev-1", session: String = "s-1", first: Bool = false,
        background: Int64 = 0, unlock: Bool = false, offset: Int = 0, unit: String = "launch", loader: String = "splash"
    ) -> ServiceRequest {
        .appOpen(
            AppOpenRequestMessage(
                request: AppOpenRequest(
                    deviceID: device, sessionID: session, event: event, isFirstLaunch: first,
                    backgroundDuration: .seconds(background), fromUnlock: unlock, utcOffsetSeconds: offset),
                adUnitID: unit, loader: loader))
    }

    func appOpen(_ service: AdLoaderService, _ request: ServiceRequest) throws -> AppOpenResponseMessage {
        #expect(service.handle(request, callID: 1, timeout: nil, responder: responder) == nil)
        guard case .appOpen(_, let answer) = responder.take().last else {
            throw TestFailure("no AppOpen answer: \(responder.answers)")
        }
        return answer
    }

    func returnLease(_ service: AdLoaderService, _ id: UInt64, shown: Bool) -> RecordingResponder.Answer? {
        _ = service.handle(
            .returnLease(ReturnRequestMessage(leaseID: id, shown: shown)), callID: 2, timeout: nil, responder: responder
        )
        return responder.take().last
    }

    func fill() throws {
        _ = try loader.prefetch(adUnitID: "launch", loader: "splash")
        clock.advance(by: .seconds(1))
    }

    @Test func anEmptyPoolAnswersNoAdReadyAndCountsNothing() throws {
        let service = service()
        let answer = try appOpen(service, Self.call())
        #expect(answer.outcome == .noAdReady && answer.reason == .coldStart && answer.lease == nil)
        #expect(answer.counts == AppOpenCounts())
        #expect(answer.day == "2026-12-01")
    }

    @Test func showLendsAnAppOpenAdAndCountsMoveOnlyOnAShownReturn() throws {
        let service = service()
        try fill()
        let first = try appOpen(service, Self.call())
        #expect(first.outcome == .show && first.reason == .coldStart)
        let lease = try #require(first.lease)
        #expect(lease.ad.format == .appOpen && lease.ad.creative.fullScreenCreative != nil)
        // Unshown: nothing counted.
        #expect(
            returnLease(service, lease.id, shown: false) == .returned(2, ReturnResponseMessage(outcome: .backInPool)))
        let second = try appOpen(service, Self.call())
        #expect(second.counts == AppOpenCounts())
        // Shown: counted before the answer.
        let shownLease = try #require(second.lease)
        #expect(
            returnLease(service, shownLease.id, shown: true) == .returned(2, ReturnResponseMessage(outcome: .consumed)))
        let third = try appOpen(service, Self.call())
        #expect(third.counts == AppOpenCounts(session: 1, day: 1) && third.outcome == .show)
        _ = returnLease(service, try #require(third.lease).id, shown: true)
        // The daily cap (2) holds; every flag and the counts are reported.
        let capped = try appOpen(service, Self.call(session: "s-2"))
        #expect(capped.outcome == .skip && capped.reason == .dailyCapReached && capped.lease == nil)
        #expect(capped.flags.dailyCapReached && !capped.flags.sessionCapReached)
        #expect(capped.counts == AppOpenCounts(session: 0, day: 2))
        // Another device is not capped; the next local day is not either.
        #expect(try appOpen(service, Self.call(device: "dev-2")).outcome == .show)
        clock.advance(by: .seconds(14 * 3600))  // 2026-12-02T00:00Z
        try fill()  // the pool went idle overnight and bought nothing: the app prefetches again
        let tomorrow = try appOpen(service, Self.call(session: "s-3"))
        #expect(tomorrow.day == "2026-12-02" && tomorrow.counts == AppOpenCounts() && tomorrow.outcome == .show)
    }

    @Test func aReturnAfterTheLeaseWasReclaimedIsNotFoundAndCountsNothing() throws {
        let service = service()
        try fill()
        let lease = try #require(try appOpen(service, Self.call()).lease)
        clock.advance(by: .seconds(301))  // past the lease timeout: reclaimed
        guard case .status(2, let status) = returnLease(service, lease.id, shown: true) else {
            throw TestFailure("a reclaimed lease was answered")
        }
        #expect(status.code == .notFound)
        #expect(try appOpen(service, Self.call()).counts == AppOpenCounts())
    }

    @Test func anOutageRefusesToShowByDefaultAndRecoversByItself() throws {
        let service = service()
        try fill()
        store.failure = CapStoreError("redis down")
        let refused = try appOpen(service, Self.call())
        #expect(refused.outcome == .skip && refused.reason == .storeUnavailable && refused.storeUnavailable)
        #expect(refused.lease == nil)
        // A non-showing decision keeps its own reason.
        #expect(try appOpen(service, Self.call(.foreground, background: 1)).reason == .belowThreshold)
        store.failure = nil
        let back = try appOpen(service, Self.call())
        #expect(back.outcome == .show && !back.storeUnavailable)
    }

    @Test func aShownReturnDuringAnOutageKeepsTheLeaseOpenForARetry() throws {
        let service = service()
        try fill()
        let lease = try #require(try appOpen(service, Self.call()).lease)
        store.failure = CapStoreError("redis down")
        guard case .status(2, let status) = returnLease(service, lease.id, shown: true) else {
            throw TestFailure("answered without counting")
        }
        #expect(status.code == .unavailable && status.message.contains("return it again"))
        store.failure = nil
        #expect(returnLease(service, lease.id, shown: true) == .returned(2, ReturnResponseMessage(outcome: .consumed)))
        #expect(try appOpen(service, Self.call()).counts == AppOpenCounts(session: 1, day: 1))
    }

    @Test(arguments: [
        (call(device: ""), Status(code: .invalidArgument, message: "device_id: must not be empty")),
        (call(session: ""), Status(code: .invalidArgument, message: "session_id: must not be empty")),
        (call(unit: ""), Status(code: .invalidArgument, message: "ad_unit_id: must not be empty")),
        (
            call(offset: 64_801),
            Status(code: .invalidArgument, message: "utc_offset_seconds: must be -64800...64800, got 64801")
        ),
        (
            call(offset: -100_000),
            Status(code: .invalidArgument, message: "utc_offset_seconds: must be -64800...64800, got -100000")
        ),
        (
            call(device: String(repeating: "d", count: 129)),
            Status(code: .invalidArgument, message: "device_id: must be at most 128 bytes, got 129")
        ),
        (call(loader: "nope"), Status(code: .invalidArgument, message: "loader: unknown loader \"nope\"")),
        (
            call(loader: ""),
            Status(
                code: .failedPrecondition,
                message: "loader \"default\" has format native; AppOpen needs a loader of format appOpen")
        ),
        (
            .appOpen(
                AppOpenRequestMessage(
                    request: AppOpenRequest(deviceID: "d", sessionID: "s", event: .launch), adUnitID: "u",
                    loader: "splash", invalidEvent: 7)),
            Status(code: .invalidArgument, message: "event: must be LAUNCH (1) or FOREGROUND (2), got 7")
        ),
    ])
    func badCallsAreRefusedAndLeaveTheServiceWorking(request: ServiceRequest, status: Status) throws {
        let service = service()
        try fill()
        #expect(service.handle(request, callID: 9, timeout: nil, responder: responder) == nil)
        #expect(responder.take() == [.status(9, status)])
        #expect(try appOpen(service, Self.call()).outcome == .show)
    }

    // MARK: A store that answers later (SQLite FULL on its worker thread)

    @Test func aLateStoreAnswerKeepsTheCallOpenUntilItArrives() throws {
        let service = service()
        try fill()
        store.defersCompletions = true
        let open = try #require(service.handle(Self.call(), callID: 1, timeout: nil, responder: responder))
        #expect(responder.answers.isEmpty && service.openCallCount == 1)
        store.completeDeferred()
        guard case .appOpen(1, let answer) = responder.take().last else { throw TestFailure("no answer") }
        #expect(answer.outcome == .show && responder.ended == [open.callID] && service.openCallCount == 0)
        // The shown Return is answered only once the store committed the count.
        let lease = try #require(answer.lease)
        let returning = try #require(
            service.handle(
                .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: true)), callID: 2, timeout: nil,
                responder: responder))
        #expect(responder.answers.isEmpty && returning.callID == 2 && loader.hasLease(lease.id))
        store.completeDeferred()
        #expect(responder.take() == [.returned(2, ReturnResponseMessage(outcome: .consumed))])
        #expect(!loader.hasLease(lease.id))
    }

    @Test func aCancelledReturnStillEndsTheLeaseItCountedAndAnswersNothing() throws {
        let service = service()
        try fill()
        let lease = try #require(try appOpen(service, Self.call()).lease)
        store.defersCompletions = true
        let returning = try #require(
            service.handle(
                .returnLease(ReturnRequestMessage(leaseID: lease.id, shown: true)), callID: 2, timeout: nil,
                responder: responder))
        #expect(service.end(returning, answering: Status(code: .cancelled, message: "cancelled by the client")))
        store.completeDeferred()
        #expect(responder.take() == [.status(2, Status(code: .cancelled, message: "cancelled by the client"))])
        // Counted once, and the lease is gone: a retry cannot count it again.
        #expect(!loader.hasLease(lease.id))
        store.defersCompletions = false
        #expect(try appOpen(service, Self.call()).counts == AppOpenCounts(session: 1, day: 1))
    }

    @Test func twoCallsInFlightForOneDeviceAnswerOneShowAndOneRefusalNamingTheCap() throws {
        let service = service()
        try fill()
        store.defersCompletions = true
        _ = service.handle(Self.call(session: "a"), callID: 1, timeout: nil, responder: responder)
        _ = service.handle(Self.call(session: "b"), callID: 2, timeout: nil, responder: responder)
        #expect(responder.answers.isEmpty && service.openCallCount == 2)
        // One device, daily cap 2: a shown and confirmed one first, then two decisions in flight.
        store.completeDeferred()
        let answers = responder.take().compactMap { answer -> AppOpenResponseMessage? in
            guard case .appOpen(_, let message) = answer else { return nil }
            return message
        }
        #expect(answers.map(\.outcome) == [.show, .show])  // the cap is 2: both fit
        store.defersCompletions = false
        _ = returnLease(service, try #require(answers[0].lease).id, shown: true)
        store.defersCompletions = true
        _ = service.handle(Self.call(session: "c"), callID: 3, timeout: nil, responder: responder)
        _ = service.handle(Self.call(session: "d"), callID: 4, timeout: nil, responder: responder)
        store.completeDeferred()
        let capped = responder.take()
        guard case .appOpen(3, let third) = capped.first, case .appOpen(4, let fourth) = capped.last else {
            throw TestFailure("answers: \(capped)")
        }
        // 1 confirmed + 1 reserved (the second SHOW, never returned) reach the cap of 2.
        #expect(third.outcome == .skip && third.reason == .dailyCapReached && third.flags.dailyCapReached)
        #expect(
            third.counts == AppOpenCounts(session: 0, day: 1) && third.reserved == AppOpenCounts(session: 0, day: 1))
        #expect(fourth.reason == .dailyCapReached && service.openCallCount == 0)
    }

    @Test func aCallWaitingForTheStoreHasADeadlineAndEndsWithTheDrain() throws {
        let service = service()
        try fill()
        store.defersCompletions = true
        _ = service.handle(Self.call(), callID: 1, timeout: .milliseconds(50), responder: responder)
        _ = service.handle(Self.call(session: "s-2"), callID: 2, timeout: nil, responder: responder)
        clock.advance(by: .milliseconds(50))
        #expect(
            responder.take() == [.status(1, Status(code: .deadlineExceeded, message: "deadline of 50 ms exceeded"))])
        service.beginDrain()
        #expect(responder.take() == [.status(2, Status(code: .unavailable, message: "server shutting down"))])
        store.completeDeferred()
        #expect(responder.answers.isEmpty && service.openCallCount == 0)
    }

    @Test func aPrefetchCountPastTheMaximumIsRefusedNamingIt() throws {
        let service = service()
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "launch", loader: "splash", count: 4)), callID: 1, timeout: nil,
            responder: responder)
        #expect(
            responder.take() == [
                .status(
                    1,
                    Status(
                        code: .invalidArgument,
                        message: "count: must be 0...3 (loader \"splash\" maximumRetainedAdvertisements), got 4"))
            ])
        _ = service.handle(
            .prefetch(PrefetchRequestMessage(adUnitID: "launch", loader: "splash", count: UInt32.max)), callID: 2,
            timeout: nil, responder: responder)
        guard case .status(2, let status) = responder.take().last else { throw TestFailure("answered") }
        #expect(status.code == .invalidArgument && status.message.hasPrefix("count:"))
    }

    @Test func theNewFieldsRoundTripTheWire() throws {
        let prefetch = PrefetchRequestMessage(adUnitID: "u", loader: "l", count: 12)
        let decoded = try prefetch.encoded().withUnsafeBytes { (b) throws(FrameError) in
            try PrefetchRequestMessage(decoding: b)
        }
        #expect(decoded.count == 12 && decoded.adUnitID == "u")
        let answer = AppOpenResponseMessage(
            outcome: .skip, reason: .coldStartExcluded, flags: AppOpenDecision.Flags(coldStart: true),
            counts: AppOpenCounts(session: 1, day: 2), reserved: AppOpenCounts(session: 3, day: 4), day: "2026-12-01")
        let back = try answer.encoded().withUnsafeBytes { (b) throws(FrameError) in
            try AppOpenResponseMessage(decoding: b)
        }
        #expect(
            back.reason == .coldStartExcluded && back.flags.coldStart
                && back.reserved == AppOpenCounts(session: 3, day: 4))
        #expect(back.counts == AppOpenCounts(session: 1, day: 2))
    }

    @Test func theMethodDecodesFromTheWire() throws {
        let message = AppOpenRequestMessage(
            request: AppOpenRequest(
                deviceID: "d", sessionID: "s", event: .foreground, isFirstLaunch: true,
                backgroundDuration: .seconds(301),
                fromUnlock: true, utcOffsetSeconds: -36_000),
            adUnitID: "u", loader: "splash")
        let request = try message.encoded().withUnsafeBytes { (b) throws(Status) in
            try ServiceRequest(method: MethodName.appOpen, message: b)
        }
        #expect(request == .appOpen(message))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
