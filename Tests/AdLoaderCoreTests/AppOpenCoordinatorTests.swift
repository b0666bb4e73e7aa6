import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// The core's app-open orchestration on a manual clock: decisions over the store's counts
/// plus the reservations in flight, tagged leases, confirmed shows, the cold-start switches.
@Suite struct AppOpenCoordinatorTests {
    let clock = ManualClock(start: AdInstant(unixMilliseconds: 1_796_119_200_000))  // 2026-12-01T10:00Z
    let source = FakeDemandSource()
    let store = InMemoryCapStore()

    static func fullScreen(_ n: Int) -> AdCreative {
        .fullScreen(FullScreenCreative(media: .markup("<p>splash \(n)</p>"), orientation: .portrait))
    }

    func coordinator(_ configure: (inout AppOpenPolicy) -> Void = { _ in }) throws -> AppOpenCoordinator {
        var splash = LoaderConfiguration(name: "splash")
        splash.source = "fake"
        splash.format = .appOpen
        splash.sizing = .fixed
        splash.maximumRetainedAdvertisements = 4
        splash.numberOfAdvertisements = 4
        splash.minimumRemainingLife = .zero
        splash.appOpen.maximumShowsPerSession = 1
        configure(&splash.appOpen)
        var feed = LoaderConfiguration(name: "default")
        feed.source = "fake"
        source.creative = Self.fullScreen
        let loader = try NativeAdvertisementLoader(
            loaders: [splash, feed], sources: ["fake": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "launch", loader: "splash")
        source.succeedAll()
        return AppOpenCoordinator(loader: loader, capStore: store)
    }

    static func request(
        _ event: AppOpenEvent = .launch, session: String = "s-1", first: Bool = false, background: Int64 = 0
    ) -> AppOpenRequest {
        AppOpenRequest(
            deviceID: "dev-1", sessionID: session, event: event, isFirstLaunch: first,
            backgroundDuration: .seconds(background))
    }

    /// Starts a decision; the answer lands in the returned box (at once, or when the store answers).
    func start(
        _ coordinator: AppOpenCoordinator, _ request: AppOpenRequest = request(), loader: String = "splash",
        isWanted: @escaping () -> Bool = { true }
    ) throws(LoaderError) -> Box {
        let box = Box()
        try coordinator.appOpen(request, adUnitID: "launch", loader: loader, isWanted: isWanted) { box.result = $0 }
        return box
    }

    func decide(_ coordinator: AppOpenCoordinator, _ request: AppOpenRequest = request()) throws -> AppOpenAnswer {
        let box = try start(coordinator, request)
        return try #require(box.result).get()
    }

    final class Box {
        var result: Result<AppOpenAnswer, LoaderError>?
        var answer: AppOpenAnswer? { try? result?.get() }
    }

    var key: CapKey {
        CapKey(
            loader: "splash", deviceID: "dev-1", sessionID: "s-1", day: LocalDay(at: clock.now, utcOffsetSeconds: 0),
            utcOffsetSeconds: 0)
    }

    // MARK: Counting a SHOW at decision time

    @Test func twoDecisionsInFlightForOneDeviceShowOnceAndTheOtherNamesTheCap() throws {
        let coordinator = try coordinator()
        store.defersCompletions = true
        let first = try start(coordinator)
        let second = try start(coordinator)
        #expect(first.result == nil && second.result == nil && store.deferredCount == 2)
        // Both read "0 shows" from the store; the first decided reserves, the second sees it.
        store.completeDeferred()
        let shown = try #require(first.answer)
        let refused = try #require(second.answer)
        #expect(shown.outcome == .show && shown.lease != nil && shown.decision.reserved == AppOpenCounts())
        #expect(refused.outcome == .skip && refused.decision.reason == .sessionCapReached)
        #expect(refused.decision.flags.sessionCapReached && refused.lease == nil)
        #expect(
            refused.decision.counts == AppOpenCounts() && refused.decision.reserved == AppOpenCounts(session: 1, day: 1)
        )
        #expect(coordinator.reservedCount == 1 && coordinator.reserved(for: key) == AppOpenCounts(session: 1, day: 1))
    }

    @Test func aConfirmedShowIsCountedOnceAndItsReservationEnds() throws {
        let coordinator = try coordinator()
        let lease = try #require(try decide(coordinator).lease)
        #expect(coordinator.needsConfirmation(leaseID: lease.id, shown: true))
        #expect(!coordinator.needsConfirmation(leaseID: lease.id, shown: false))
        store.defersCompletions = true
        var confirmed: Result<AppOpenCounts, CapStoreError>?
        try coordinator.confirmShow(leaseID: lease.id) { confirmed = $0 }
        // A second shown Return while the first is being counted cannot count it again.
        #expect(throws: LoaderError.self) { try coordinator.confirmShow(leaseID: lease.id) { _ in } }
        #expect(coordinator.reservedCount == 1)  // held until the store has the show
        store.completeDeferred()
        #expect(try confirmed?.get() == AppOpenCounts(session: 1, day: 1))
        #expect(coordinator.reservedCount == 0)
        try coordinator.loader.returnLease(lease.id, shown: true)
        #expect(coordinator.openLeaseCount == 0)
        store.defersCompletions = false
        let after = try decide(coordinator)
        #expect(after.outcome == .skip && after.decision.reason == .sessionCapReached)
        #expect(
            after.decision.counts == AppOpenCounts(session: 1, day: 1) && after.decision.reserved == AppOpenCounts())
    }

    @Test func theReservationEndsAtItsBoundWhenTheShowIsNotConfirmed() throws {
        let coordinator = try coordinator { $0.reservationTimeout = .seconds(30) }
        let lease = try #require(try decide(coordinator).lease)
        clock.advance(by: .milliseconds(29_999))
        #expect(try decide(coordinator).decision.reason == .sessionCapReached)
        clock.advance(by: .milliseconds(1))
        #expect(coordinator.reservedCount == 0 && coordinator.loader.hasLease(lease.id))
        let again = try decide(coordinator)
        #expect(again.outcome == .show && again.decision.reserved == AppOpenCounts())
        // A shown Return after the bound still counts the show (the lease is open).
        try coordinator.confirmShow(leaseID: lease.id) { _ in }
        try coordinator.loader.returnLease(lease.id, shown: true)
        var counts: AppOpenCounts?
        store.counts(for: key, at: clock.now, sessionTimeout: .seconds(1800)) { counts = try? $0.get() }
        #expect(counts == AppOpenCounts(session: 1, day: 1))
    }

    @Test func aLeaseEndingUnshownOrReclaimedReleasesItsReservation() throws {
        let coordinator = try coordinator()
        let lease = try #require(try decide(coordinator).lease)
        try coordinator.loader.returnLease(lease.id, shown: false)
        #expect(coordinator.reservedCount == 0 && coordinator.openLeaseCount == 0)
        // The default bound (60 s) is past the lease timeout here: the reclaim releases it.
        let coordinator2 = try self.coordinator { $0.reservationTimeout = .seconds(3600) }
        _ = try #require(try decide(coordinator2).lease)
        #expect(coordinator2.reservedCount == 1)
        clock.advance(by: .seconds(301))  // past the 300 s lease timeout
        #expect(coordinator2.reservedCount == 0 && coordinator2.openLeaseCount == 0)
        #expect(try decide(coordinator2).outcome == .show)
    }

    @Test func noAdReadyReservesNothing() throws {
        let coordinator = try coordinator()
        for _ in 0..<4 { _ = try coordinator.loader.borrow(adUnitID: "launch", loader: "splash", whenServed: { _ in }) }
        let answer = try decide(coordinator)
        #expect(answer.outcome == .noAdReady && answer.lease == nil && coordinator.reservedCount == 0)
    }

    @Test func aCallerThatStoppedWaitingGetsNothingLentOrReserved() throws {
        let coordinator = try coordinator()
        store.defersCompletions = true
        let box = try start(coordinator, isWanted: { false })
        store.completeDeferred()
        #expect(box.result == nil && coordinator.reservedCount == 0 && coordinator.openLeaseCount == 0)
        #expect(coordinator.loader.stats(loader: "splash").first?.leased == 0)
    }

    @Test func anOtherLeaseNeedsNoConfirmation() throws {
        let coordinator = try coordinator()
        _ = try decide(coordinator)
        source.creative = { .native(NativeAdContent(headline: "ad \($0)")) }
        try coordinator.loader.prefetch(adUnitID: "feed")
        source.succeedAll()
        guard
            case .answered(.leased(let native, _)) = try coordinator.loader.borrow(
                adUnitID: "feed", whenServed: { _ in })
        else { throw TestFailure("no native lease") }
        #expect(!coordinator.needsConfirmation(leaseID: native.id, shown: true))
        #expect(throws: LoaderError.self) { try coordinator.confirmShow(leaseID: native.id) { _ in } }
    }

    @Test func anOutageRefusesToShowAndStillHoldsTheReservations() throws {
        let coordinator = try coordinator()
        let refused = try {
            store.failure = CapStoreError("redis down")
            return try decide(coordinator)
        }()
        #expect(refused.outcome == .skip && refused.decision.reason == .storeUnavailable && refused.storeError != nil)
        store.failure = nil
        _ = try decide(coordinator)  // a show, reserved
        let allow = AppOpenCoordinator(loader: coordinator.loader, capStore: store, outageMode: .allow)
        store.failure = CapStoreError("redis down")
        #expect(try decide(allow).outcome == .show)  // counts read 0, nothing reserved in this one
        #expect(try decide(allow).decision.reason == .sessionCapReached)  // its own reservation holds
    }

    @Test func badCallsAreRefusedBeforeTheStoreIsAsked() throws {
        let coordinator = try coordinator()
        store.defersCompletions = true
        #expect(throws: LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"nope\"")) {
            _ = try start(coordinator, loader: "nope")
        }
        #expect(
            throws: LoaderError(
                code: .failedPrecondition,
                message: "loader \"default\" has format native; AppOpen needs a loader of format appOpen")
        ) { _ = try start(coordinator, loader: "default") }
        var empty = Self.request()
        empty.deviceID = ""
        #expect(throws: LoaderError(code: .invalidArgument, field: "device_id", message: "must not be empty")) {
            _ = try start(coordinator, empty)
        }
        #expect(store.deferredCount == 0)
    }

    // MARK: Cold starts

    @Test func coldStartsCanBeTurnedOffApartFromFirstLaunchesAndReturns() throws {
        let coordinator = try coordinator {
            $0.showOnColdStart = false
            $0.maximumShowsPerSession = nil
        }
        let cold = try decide(coordinator, Self.request(.launch))
        #expect(cold.outcome == .skip && cold.decision.reason == .coldStartExcluded && cold.decision.flags.coldStart)
        let first = try decide(coordinator, Self.request(.launch, first: true))
        #expect(first.outcome == .show && first.decision.reason == .firstLaunch && !first.decision.flags.coldStart)
        let hot = try decide(coordinator, Self.request(.foreground, background: 600))
        #expect(hot.outcome == .show && hot.decision.reason == .hotStart && !hot.decision.flags.coldStart)
    }

    @Test func theDefaultsShowOnBothKindsOfLaunch() {
        let policy = AppOpenPolicy()
        #expect(policy.showOnFirstLaunch && policy.showOnColdStart && policy.reservationTimeout == .seconds(60))
        let day = LocalDay(daysSinceEpoch: 20_000)
        #expect(policy.decide(Self.request(.launch), counts: AppOpenCounts(), day: day).reason == .coldStart)
        var off = policy
        off.showOnFirstLaunch = false
        #expect(off.decide(Self.request(.launch), counts: AppOpenCounts(), day: day).reason == .coldStart)
        #expect(
            off.decide(Self.request(.launch, first: true), counts: AppOpenCounts(), day: day).reason
                == .firstLaunchExcluded)
        off.reservationTimeout = .zero
        #expect(throws: ConfigError(field: "p.reservationTimeout", message: "must be positive")) {
            try off.validate(prefix: "p")
        }
    }
}
