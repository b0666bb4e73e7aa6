import AdLoaderCore
import Testing

/// The app-open decision: every setting and flag, pure inputs to outputs.
struct AppOpenPolicyTests {
    static let day = LocalDay(daysSinceEpoch: 20_788)

    static func request(
        _ event: AppOpenEvent, first: Bool = false, background: Duration = .zero, unlock: Bool = false
    ) -> AppOpenRequest {
        AppOpenRequest(
            deviceID: "d", sessionID: "s", event: event, isFirstLaunch: first, backgroundDuration: background,
            fromUnlock: unlock)
    }

    func decide(
        _ request: AppOpenRequest, _ counts: AppOpenCounts = AppOpenCounts(),
        policy: (inout AppOpenPolicy) -> Void = { _ in }
    ) -> AppOpenDecision {
        var p = AppOpenPolicy()
        policy(&p)
        return p.decide(request, counts: counts, day: Self.day)
    }

    @Test func defaultsAreTheDeviceLibrarys() {
        let p = AppOpenPolicy()
        #expect(p.showOnFirstLaunch)
        #expect(p.backgroundThreshold == .seconds(300))
        #expect(p.excludeUnlockReturns)
        #expect(p.maximumShowsPerSession == nil)
        #expect(p.maximumShowsPerDay == nil)
        #expect(p.sessionTimeout == .seconds(1800))
    }

    @Test func firstLaunchShowsUnlessTheSettingIsOff() {
        let shown = decide(Self.request(.launch, first: true))
        #expect(shown.shows && shown.reason == .firstLaunch && shown.flags.firstLaunch)
        let off = decide(Self.request(.launch, first: true)) { $0.showOnFirstLaunch = false }
        #expect(!off.shows && off.reason == .firstLaunchExcluded && off.flags.firstLaunch)
        // The setting is only about the first launch.
        let later = decide(Self.request(.launch)) { $0.showOnFirstLaunch = false }
        #expect(later.shows && later.reason == .coldStart && !later.flags.firstLaunch)
    }

    @Test(arguments: [
        (Duration.zero, false), (.seconds(299), false), (.milliseconds(299_999), false), (.seconds(300), true),
        (.seconds(3600), true),
    ])
    func aReturnIsAHotStartFromTheThreshold(background: Duration, shows: Bool) {
        let d = decide(Self.request(.foreground, background: background))
        #expect(d.shows == shows)
        #expect(d.flags.thresholdReached == shows)
        #expect(d.reason == (shows ? .hotStart : .belowThreshold))
    }

    @Test func theThresholdIsASetting() {
        let d = decide(Self.request(.foreground, background: .seconds(30))) { $0.backgroundThreshold = .seconds(30) }
        #expect(d.shows && d.flags.thresholdReached)
        let zero = decide(Self.request(.foreground)) { $0.backgroundThreshold = .zero }
        #expect(zero.shows)
    }

    @Test func unlockReturnsAreExcludedByDefaultAndTheFlagIsReportedEitherWay() {
        let excluded = decide(Self.request(.foreground, background: .seconds(600), unlock: true))
        #expect(!excluded.shows && excluded.reason == .fromUnlock)
        #expect(excluded.flags.fromUnlock && excluded.flags.thresholdReached)
        let allowed = decide(Self.request(.foreground, background: .seconds(600), unlock: true)) {
            $0.excludeUnlockReturns = false
        }
        #expect(allowed.shows && allowed.reason == .hotStart && allowed.flags.fromUnlock)
        // Below the threshold an allowed unlock return still does not show.
        let short = decide(Self.request(.foreground, background: .seconds(5), unlock: true)) {
            $0.excludeUnlockReturns = false
        }
        #expect(short.reason == .belowThreshold)
    }

    @Test func theSessionCapHoldsAtItsValue() {
        let set: (inout AppOpenPolicy) -> Void = { $0.maximumShowsPerSession = 2 }
        let under = decide(Self.request(.launch), AppOpenCounts(session: 1, day: 1), policy: set)
        #expect(under.shows && !under.flags.sessionCapReached)
        let at = decide(Self.request(.launch), AppOpenCounts(session: 2, day: 2), policy: set)
        #expect(!at.shows && at.reason == .sessionCapReached && at.flags.sessionCapReached)
        #expect(at.counts == AppOpenCounts(session: 2, day: 2))
        let unlimited = decide(Self.request(.launch), AppOpenCounts(session: 1_000, day: 1_000))
        #expect(unlimited.shows && !unlimited.flags.sessionCapReached && !unlimited.flags.dailyCapReached)
        let zero = decide(Self.request(.launch)) { $0.maximumShowsPerSession = 0 }
        #expect(zero.reason == .sessionCapReached)
    }

    @Test func theDailyCapHoldsAtItsValue() {
        let set: (inout AppOpenPolicy) -> Void = { $0.maximumShowsPerDay = 3 }
        #expect(decide(Self.request(.launch), AppOpenCounts(session: 0, day: 2), policy: set).shows)
        let at = decide(Self.request(.launch), AppOpenCounts(session: 0, day: 3), policy: set)
        #expect(!at.shows && at.reason == .dailyCapReached && at.flags.dailyCapReached)
        #expect(at.day == Self.day)
    }

    @Test func theSessionCapIsReportedBeforeTheDailyCapAndTheEventRuleBeforeBoth() {
        let both: (inout AppOpenPolicy) -> Void = {
            $0.maximumShowsPerSession = 1
            $0.maximumShowsPerDay = 1
        }
        let d = decide(Self.request(.launch), AppOpenCounts(session: 1, day: 1), policy: both)
        #expect(d.reason == .sessionCapReached && d.flags.sessionCapReached && d.flags.dailyCapReached)
        let e = decide(
            Self.request(.foreground, background: .seconds(1)), AppOpenCounts(session: 1, day: 1), policy: both)
        #expect(e.reason == .belowThreshold && e.flags.sessionCapReached && e.flags.dailyCapReached)
    }

    @Test func everyReasonSaysWhichWayItDecides() {
        let showing = AppOpenDecision.Reason.allCases.filter(\.shows)
        #expect(showing == [.firstLaunch, .coldStart, .hotStart])
        #expect(Set(AppOpenDecision.Reason.allCases.map(\.description)).count == AppOpenDecision.Reason.allCases.count)
    }

    @Test func settingsAreValidated() throws {
        var p = AppOpenPolicy()
        try p.validate(prefix: "x")
        p.maximumShowsPerDay = -1
        #expect(throws: ConfigError(field: "x.maximumShowsPerDay", message: "must not be negative, got -1")) {
            try p.validate(prefix: "x")
        }
        p = AppOpenPolicy()
        p.maximumShowsPerSession = -2
        #expect(throws: ConfigError.self) { try p.validate(prefix: "x") }
        p = AppOpenPolicy()
        p.sessionTimeout = .zero
        #expect(throws: ConfigError(field: "x.sessionTimeout", message: "must be positive")) {
            try p.validate(prefix: "x")
        }
        p = AppOpenPolicy()
        p.backgroundThreshold = .seconds(-1)
        #expect(throws: ConfigError.self) { try p.validate(prefix: "x") }
        var c = LoaderConfiguration(name: "ao")
        c.appOpen.sessionTimeout = .zero
        #expect(throws: ConfigError(field: "loaders.ao.appOpen.sessionTimeout", message: "must be positive")) {
            try c.validate()
        }
    }
}
