import AdLoaderCore
import AdLoaderTestSupport

/// (d) adloaderd's feed plan: each user's session is one feed (`u<user>`), planned with the
/// Plan call as MoPub's stream placer places ads: whenever the viewport moves, if the window
/// (visible cells plus `ahead` of look-ahead) holds an ad position with no final answer yet —
/// never planned, "coming", or answered with an ad while it was not visible, which the service
/// must learn it rendered — one Plan call for that window. Answers are kept by the backend, so
/// a scroll back over positions already rendered costs no call; a position rendered with its
/// ad is returned shown when its cell is released, once (a later appearance shows the same ad
/// again: a re-view). The placement is the trace's (an ad every `adEvery` cells), the
/// separation the loader's default rules, checked here again on every answer.
final class PlanStrategy: StrategyBase, FeedStrategy {
    let loader: NativeAdvertisementLoader
    let source: CountingSource
    let ahead: Int
    let viewport: Int
    let adEvery: Int
    let separation: SeparationRules
    let name = "adloaderd Plan"

    private enum Answer {
        case ad(Lease)
        case coming
        case empty
    }

    private final class Feed {
        var top = 0
        var answers: [Int: Answer] = [:]
        /// Positions the service was told are visible (rendered) with their answer.
        var rendered: Set<Int> = []
        /// Rendered positions whose lease was returned shown.
        var returned: Set<Int> = []
        /// Positions whose ad was displayed in this feed (a later display is a re-view).
        var displayed: Set<Int> = []
    }

    private var feeds: [Int32: Feed] = [:]
    private var loaded = 0
    private var unshown = 0
    private var peakLeased = 0
    private var peakAdsHeld = 0
    /// Calls after the warm-up: Plan, Return; screens (viewport positions) after the warm-up.
    private(set) var planCalls = 0
    private(set) var returnCalls = 0
    private(set) var screens = 0
    /// Checked here on every answer: two ads closer than a separation rule allows, an answer
    /// that changed (an ad replaced or gone, an empty position given an ad), a visible position
    /// answered "coming", and Plan calls refused (a full feed table).
    private(set) var violations = 0
    private(set) var changedAnswers = 0
    private(set) var comingWhileVisible = 0
    private(set) var refused = 0
    private(set) var replanned = 0

    init(
        clock: ManualClock, recorder: Recorder, loader: NativeAdvertisementLoader, source: CountingSource,
        ahead: Int, viewport: Int, adEvery: Int
    ) throws {
        self.loader = loader
        self.source = source
        self.ahead = ahead
        self.viewport = viewport
        self.adEvery = adEvery
        self.separation = loader.configuration(named: FeedScroll.loaderName)?.separation ?? SeparationRules()
        super.init(clock: clock, recorder: recorder)
        _ = loader.addObserver { [unowned self] event in
            switch event.kind {
            case .received: loaded += 1
            case .expired, .removed: unshown += event.reason == .consumed ? 0 : 1
            default: break
            }
        }
        try loader.prefetch(adUnitID: FeedScroll.adUnitID, loader: FeedScroll.loaderName)
    }

    var counters: UpstreamCounters { UpstreamCounters(requests: source.requests, loaded: loaded, unshown: unshown) }

    private var measuring: Bool { elapsed >= recorder.warmup }

    private func isAdPosition(_ cell: Int) -> Bool { cell % adEvery == adEvery - 1 }

    func scroll(user: Int32, top: Int32, unit: Int32) {
        let feed = feeds[user] ?? Feed()
        feeds[user] = feed
        feed.top = Int(top)
        if measuring { screens += 1 }
        let visible = feed.top...(feed.top + viewport - 1)
        var needed = false
        for position in feed.top...(visible.upperBound + ahead) where isAdPosition(position) {
            switch feed.answers[position] {
            case nil, .coming?: needed = true
            case .ad?: if visible.contains(position) && !feed.rendered.contains(position) { needed = true }
            case .empty?: break
            }
        }
        guard needed else { return }
        if measuring { planCalls += 1 }
        source.lastDemand[FeedScroll.adUnitID(unit)] = clock.now
        let plan: FeedPlan
        do {
            plan = try loader.plan(
                PlanRequest(
                    feedID: "u\(user)", adUnitID: FeedScroll.adUnitID(unit), loader: FeedScroll.loaderName,
                    visible: visible, ahead: ahead))
        } catch {
            refused += 1
            return
        }
        for planned in plan.positions {
            let position = planned.position
            let isVisible = visible.contains(position)
            let wasRendered = feed.rendered.contains(position)
            switch (feed.answers[position], planned.state) {
            case (.ad(let before)?, .ad(let lease)) where before.id == lease.id && before.ad.id == lease.ad.id:
                break
            case (.ad?, _) where wasRendered, (.empty?, .ad), (.empty?, .coming):
                changedAnswers += 1
            case (.ad?, _):
                // Not rendered yet and its ad lost meanwhile (FeedStats.guaranteesLost): planned again.
                replanned += 1
                feed.answers[position] = nil
                if case .ad(let lease) = planned.state {
                    if !allowed(lease.ad, at: position, in: feed) { violations += 1 }
                    feed.answers[position] = .ad(lease)
                } else {
                    feed.answers[position] = .coming
                }
            case (_, .ad(let lease)):
                if !allowed(lease.ad, at: position, in: feed) { violations += 1 }
                feed.answers[position] = .ad(lease)
            case (_, .coming):
                if isVisible { comingWhileVisible += 1 }
                feed.answers[position] = .coming
            case (_, .empty):
                feed.answers[position] = .empty
            }
            if isVisible { feed.rendered.insert(position) }
        }
    }

    /// The loader's separation rules, checked against the feed's other ads.
    private func allowed(_ ad: Ad, at position: Int, in feed: Feed) -> Bool {
        var ads: [Int: Ad] = [:]
        for (other, answer) in feed.answers {
            if case .ad(let lease) = answer { ads[other] = lease.ad }
        }
        return SeparationCheck.allows(ad, at: position, among: ads, separation)
    }

    func appear(key: Int64, user: Int32, cell: Int32, unit: Int32) {
        let appearance = recorder.appear(at: elapsed)
        guard let feed = feeds[user], case .ad? = feed.answers[Int(cell)] else { return }
        let position = Int(cell)
        recorder.display(appearance, at: elapsed, newAd: !feed.displayed.contains(position))
        feed.displayed.insert(position)
    }

    func disappear(key: Int64) {}

    func release(key: Int64) {
        let user = Int32(truncatingIfNeeded: key >> 32)
        let position = Int(Int32(truncatingIfNeeded: key))
        guard let feed = feeds[user], feed.displayed.contains(position), !feed.returned.contains(position),
            case .ad(let lease)? = feed.answers[position]
        else { return }
        feed.returned.insert(position)
        if measuring { returnCalls += 1 }
        _ = try? loader.returnLease(lease.id, shown: true)
    }

    func sample() {
        let all = loader.stats(loader: FeedScroll.loaderName)
        peakLeased = max(peakLeased, all.reduce(0) { $0 + $1.leased })
        peakAdsHeld = max(peakAdsHeld, loader.adsHeld)
    }

    func finish(into result: inout StrategyResult) {
        let all = loader.stats(loader: FeedScroll.loaderName)
        result.peakLeased = peakLeased
        result.leftInPool = all.reduce(0) { $0 + $1.available }
        result.leasesReclaimed = all.reduce(0) { $0 + Int($1.leasesReclaimed) }
        result.poolsLeft = all.count
        result.peakAdsHeld = peakAdsHeld
        result.calls = planCalls + returnCalls
        result.screens = screens
        result.separationBreaches = violations
        let stats = loader.feedStats
        result.plan = PlanFigures(
            planCalls: planCalls, returnCalls: returnCalls, holds: stats.separationHolds, violations: violations,
            changedAnswers: changedAnswers, comingWhileVisible: comingWhileVisible, refused: refused,
            positionsPlanned: stats.positionsPlanned, positionsFilled: stats.positionsFilled,
            positionsEmpty: stats.positionsEmpty, comingAnswers: stats.comingAnswers,
            guaranteesLost: stats.guaranteesLost, feedsRefused: stats.feedsRefused, replanned: replanned)
    }
}

/// The plan mode's own figures (see ``PlanStrategy``).
struct PlanFigures {
    var planCalls = 0
    var returnCalls = 0
    var holds: UInt64 = 0
    var violations = 0
    var changedAnswers = 0
    var comingWhileVisible = 0
    var refused = 0
    var positionsPlanned: UInt64 = 0
    var positionsFilled: UInt64 = 0
    var positionsEmpty: UInt64 = 0
    var comingAnswers: UInt64 = 0
    var guaranteesLost: UInt64 = 0
    var feedsRefused: UInt64 = 0
    var replanned = 0
}

/// The separation rules, checked by the simulation itself (not by the planner's code).
enum SeparationCheck {
    /// Whether `ad` at `position` keeps the rules against the other ads of one feed.
    static func allows(_ ad: Ad, at position: Int, among ads: [Int: Ad], _ rules: SeparationRules) -> Bool {
        let creative = CreativeKey(ad)
        for (other, placed) in ads where other != position {
            let distance = abs(other - position)
            if placed.id == ad.id { return false }
            if rules.creativeOncePerFeed && CreativeKey(placed) == creative { return false }
            if let d = rules.creativeDistance, distance < d, CreativeKey(placed) == creative { return false }
            if let d = rules.advertiserDomainDistance, distance < d,
                placed.advertiserDomains.contains(where: ad.advertiserDomains.contains)
            {
                return false
            }
            if let d = rules.categoryDistance, distance < d, placed.categories.contains(where: ad.categories.contains) {
                return false
            }
        }
        return true
    }
}
