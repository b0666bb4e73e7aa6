import AdLoaderCore

/// The reservation checks of ``CapStoreBehaviour``: the core's ``AppOpenCoordinator`` over a
/// store of each kind, two decisions in flight for one device before either show is
/// confirmed (with a store that answers later, both read the store before either completes).
extension CapStoreBehaviour {
    /// An app-open source answered by hand: ``deliver()`` completes every request in full.
    final class HandSource: DemandSource {
        private var pending: [(count: Int, completion: (Result<[DeliveredAd], UpstreamError>) -> Void)] = []

        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {
            pending.append((count, completion))
        }

        func deliver() {
            let waiting = pending
            pending = []
            for (count, completion) in waiting {
                completion(
                    .success(
                        (0..<count).map { _ in
                            DeliveredAd(
                                creative: .fullScreen(
                                    FullScreenCreative(media: .markup("<p>splash</p>"), orientation: .portrait)))
                        }))
            }
        }
    }

    /// A loader of format appOpen named `name` with caps of 1, filled, and a coordinator over `store`.
    static func appOpenLoader(
        _ name: String, store: any CapStore, clock: ManualClock, session: Int?, day: Int?
    ) throws -> AppOpenCoordinator {
        var configuration = LoaderConfiguration(name: name)
        configuration.source = "hand"
        configuration.format = .appOpen
        configuration.sizing = .fixed
        configuration.maximumRetainedAdvertisements = 4
        configuration.numberOfAdvertisements = 4
        configuration.appOpen.maximumShowsPerSession = session
        configuration.appOpen.maximumShowsPerDay = day
        configuration.appOpen.reservationTimeout = .seconds(60)
        let source = HandSource()
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["hand": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "splash", loader: name)
        source.deliver()
        return AppOpenCoordinator(loader: loader, capStore: store)
    }

    /// Two AppOpen decisions started before either store read answered; their answers.
    static func twoDecisions(
        _ coordinator: AppOpenCoordinator, _ c: Context, sessions: (String, String)
    ) throws -> [AppOpenAnswer] {
        var answers: [Result<AppOpenAnswer, LoaderError>] = []
        for session in [sessions.0, sessions.1] {
            try coordinator.appOpen(
                AppOpenRequest(deviceID: "device", sessionID: session, event: .launch), adUnitID: "splash",
                loader: coordinator.loader.configurations.keys.first!, isWanted: { true }
            ) { answers.append($0) }
        }
        for _ in 0..<10 where answers.count < 2 { c.settle() }
        guard answers.count == 2 else { throw CapStoreError("\(answers.count) of 2 decisions answered") }
        return try answers.map { try $0.get() }
    }

    /// Counts a show of `lease`, settling the store until it answered.
    static func confirm(_ coordinator: AppOpenCoordinator, _ lease: Lease, _ c: Context) throws {
        var result: Result<AppOpenCounts, CapStoreError>?
        try coordinator.confirmShow(leaseID: lease.id) { result = $0 }
        for _ in 0..<10 where result == nil { c.settle() }
        guard let result else { throw CapStoreError("the confirm did not answer") }
        _ = try result.get()
        try coordinator.loader.returnLease(lease.id, shown: true)
    }

    static let reservationChecks: [Check] = [
        Check(name: "two-decisions-in-flight-show-once-under-a-session-cap") { c, _ in
            let store = try c.open()
            defer { store.close() }
            let clock = ManualClock(start: start)
            let coordinator = try appOpenLoader(c.loader, store: store, clock: clock, session: 1, day: nil)
            let answers = try twoDecisions(coordinator, c, sessions: ("s1", "s1"))
            let shows = answers.filter { $0.outcome == .show }
            let refused = answers.filter { $0.outcome == .skip }
            c.expect(
                shows.count == 1 && refused.count == 1, "two decisions: \(answers.map(\.outcome)), expected one show")
            c.expect(
                refused.first?.decision.reason == .sessionCapReached
                    && refused.first?.decision.reserved == AppOpenCounts(session: 1, day: 1),
                "the refusal: \(String(describing: refused.first?.decision))")
            // Confirmed once: the store holds it, the reservation is gone, the cap still holds.
            if let lease = shows.first?.lease { try confirm(coordinator, lease, c) }
            c.expect(coordinator.reservedCount == 0, "after the confirm: \(coordinator.reservedCount) reserved")
            let stored = try c.counts(store, c.key(at: start), at: start)
            c.expect(stored == AppOpenCounts(session: 1, day: 1), "the store after one confirmed show: \(stored)")
            let after = try twoDecisions(coordinator, c, sessions: ("s1", "s1"))
            c.expect(
                after.allSatisfy { $0.decision.reason == .sessionCapReached && $0.decision.counts.session == 1 },
                "after the confirmed show: \(after.map(\.decision.reason))")
        },
        Check(name: "two-decisions-in-flight-show-once-under-a-daily-cap-and-the-bound-releases") { c, _ in
            let store = try c.open()
            defer { store.close() }
            let clock = ManualClock(start: start)
            let coordinator = try appOpenLoader(c.loader, store: store, clock: clock, session: nil, day: 1)
            // Two sessions of one device: only the day is shared.
            let answers = try twoDecisions(coordinator, c, sessions: ("a", "b"))
            c.expect(
                answers.map(\.outcome) == [.show, .skip] && answers[1].decision.reason == .dailyCapReached,
                "two sessions, daily cap 1: \(answers.map(\.decision.reason))")
            // Never returned shown: after the reservation timeout the device may be asked again.
            clock.advance(by: .seconds(60))
            c.expect(coordinator.reservedCount == 0, "after the bound: \(coordinator.reservedCount) reserved")
            let again = try twoDecisions(coordinator, c, sessions: ("a", "b"))
            c.expect(
                again.map(\.outcome) == [.show, .skip] && again[0].decision.counts == AppOpenCounts(),
                "after the bound: \(again.map(\.decision.reason))")
        },
    ]
}
