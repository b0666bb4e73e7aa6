import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// The feed plan against a model, over 10,000 seeded feeds: random placement and separation
/// rules, scroll paths with jumps and scroll-backs, pools running dry, partial fills and
/// upstream failures, shown returns, idle feeds forgotten. Every answer is checked:
/// - no two ads of a feed break a separation rule (nor one ad or, when the rule is on, one
///   creative twice in a feed);
/// - a position answered with an ad keeps that lease and ad in every later answer (none
///   left empty, none changed), a position rendered empty stays empty, a visible position is
///   never "coming";
/// - no ad is leased to two positions at once, in any feed.
@Suite struct FeedPlanModelTests {
    struct Violations {
        var separation = 0
        var guaranteedEmptied = 0
        var answersChanged = 0
        var adsInTwoPositions = 0
        var visibleComing = 0
        var first: [String] = []

        mutating func flag(_ kind: WritableKeyPath<Violations, Int>, _ message: @autoclosure () -> String) {
            self[keyPath: kind] += 1
            if first.count < 5 { first.append(message()) }
        }

        var total: Int { separation + guaranteedEmptied + answersChanged + adsInTwoPositions + visibleComing }
    }

    /// What the model remembers of one feed.
    struct ModelFeed {
        var answers: [Int: PlannedPosition.State] = [:]
        var rendered: Set<Int> = []
        var lastCall: Int64 = 0
        var top = 0
    }

    static let runs = 100
    static let feedsPerRun = 100

    @Test func tenThousandSeededFeedsKeepEveryPromise() throws {
        var violations = Violations()
        var totals = (calls: 0, filled: 0, coming: 0, empty: 0, holds: UInt64(0))
        for run in 0..<Self.runs {
            let counts = try runOnce(seed: UInt64(run), violations: &violations)
            totals.calls += counts.calls
            totals.filled += counts.filled
            totals.coming += counts.coming
            totals.empty += counts.empty
            totals.holds += counts.holds
        }
        print("feed plan model: \(totals), violations \(violations.total): \(violations.first)")
        #expect(violations.separation == 0, "\(violations.first)")
        #expect(violations.guaranteedEmptied == 0, "\(violations.first)")
        #expect(violations.answersChanged == 0, "\(violations.first)")
        #expect(violations.adsInTwoPositions == 0, "\(violations.first)")
        #expect(violations.visibleComing == 0, "\(violations.first)")
        // The run exercised what it claims: fills, coming answers, empties and separation holds.
        #expect(totals.calls > 50_000 && totals.filled > 10_000 && totals.coming > 1_000)
        #expect(totals.empty > 1_000 && totals.holds > 300, "\(totals)")
    }

    func runOnce(
        seed: UInt64, violations: inout Violations
    ) throws -> (calls: Int, filled: Int, coming: Int, empty: Int, holds: UInt64) {
        var random = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let advertisers = 1 + random.below(20)
        let categories = 1 + random.below(12)
        let creatives = 3 + random.below(400)
        var fixed = Set<Int>()
        for _ in 0..<random.below(4) { fixed.insert(random.below(12)) }
        let placement = PlacementRules(
            fixedPositions: fixed.sorted(), repeatingInterval: random.chance(0.85) ? 2 + random.below(7) : nil,
            maximumAdsPerFeed: random.chance(0.3) ? 1 + random.below(30) : 256)
        let separation = SeparationRules(
            creativeDistance: random.chance(0.4) ? 1 + random.below(20) : nil,
            advertiserDomainDistance: random.chance(0.7) ? 1 + random.below(15) : nil,
            categoryDistance: random.chance(0.5) ? 1 + random.below(10) : nil,
            creativeOncePerFeed: random.chance(0.6))
        let idle = Int64(30 + random.below(270)) * 1000
        let h = try Harness(seed: seed) {
            $0.sizing = random.chance(0.5) ? .demand : .fixed
            $0.maximumRetainedAdvertisements = 5 + random.below(40)
            $0.placement = placement
            $0.separation = separation
            $0.configuredFeedIdleTimeout = .milliseconds(idle)
            $0.maximumFeeds = Self.feedsPerRun
        }
        h.source.advertiserDomains = { ["a\($0 % advertisers).example"] }
        h.source.categories = { ["IAB\($0 % categories)"] }
        h.source.creativeID = { "c\($0 % creatives)" }
        let fillRate = random.chance(0.3) ? 0.3 : 1.0
        let failRate = random.chance(0.3) ? 0.3 : 0.0

        var feeds: [ModelFeed] = Array(repeating: ModelFeed(), count: Self.feedsPerRun)
        var calls = 0
        var filled = 0
        var coming = 0
        var empty = 0
        var lost = 0
        let steps = Self.feedsPerRun * 12
        for _ in 0..<steps {
            // The world moves: time passes, the upstream answers or fails.
            if random.chance(0.3) { h.clock.advance(by: .milliseconds(Int64(random.below(20_000)))) }
            while !h.source.pending.isEmpty && random.chance(0.7) {
                if random.chance(failRate) {
                    h.source.fail(0, random.chance(0.5) ? .retryable : .unreachable)
                } else {
                    let count = h.source.pending[0].count
                    h.source.succeed(0, fill: random.chance(fillRate) ? count : random.below(count + 1))
                }
            }
            let index = random.below(Self.feedsPerRun)
            let now = h.clock.now.unixMilliseconds
            if feeds[index].lastCall != 0 && now - feeds[index].lastCall >= idle { feeds[index] = ModelFeed() }
            // Scroll down, jump, or scroll back.
            var top = feeds[index].top
            let move = random.below(10)
            if move < 6 {
                top += random.below(8)
            } else if move < 8 {
                top = max(0, top - random.below(20))
            } else {
                top += random.below(60)
            }
            let height = 3 + random.below(8)
            let ahead = random.below(6)
            let plan: FeedPlan
            do {
                plan = try h.loader.plan(
                    PlanRequest(
                        feedID: "feed-\(index)", adUnitID: "unit", visible: top...(top + height - 1), ahead: ahead))
            } catch {
                throw TestFailure("plan failed: \(error)")
            }
            calls += 1
            feeds[index].top = top
            feeds[index].lastCall = now
            let visible = top...(top + height - 1)
            let expected = placement.adPositions(in: top..<(top + height + ahead))
            if plan.positions.map(\.position) != expected {
                violations.flag(\.answersChanged, "positions \(plan.positions.map(\.position)) != \(expected)")
            }
            for answer in plan.positions {
                let position = answer.position
                let before = feeds[index].answers[position]
                switch (before, answer.state) {
                case (.ad(let old)?, _)
                where !feeds[index].rendered.contains(position) && old.ad.expiresAt.unixMilliseconds <= now:
                    // Never rendered, and its ad expired meanwhile: planned again (allowed).
                    lost += 1
                case (.ad(let old)?, .ad(let new)):
                    if old.id != new.id || old.ad.id != new.ad.id {
                        violations.flag(
                            \.answersChanged, "seed \(seed) feed \(index) position \(position) changed its ad")
                    }
                case (.ad?, _):
                    violations.flag(\.guaranteedEmptied, "seed \(seed) feed \(index) position \(position) lost its ad")
                case (.empty?, let state) where state != .empty:
                    violations.flag(\.answersChanged, "seed \(seed) position \(position) rendered empty got \(state)")
                default: break
                }
                if visible.contains(position) && answer.state == .coming {
                    violations.flag(\.visibleComing, "seed \(seed) visible position \(position) answered coming")
                }
                switch answer.state {
                case .ad: if before == nil || before == .coming { filled += 1 }
                case .coming: coming += 1
                case .empty: if before == nil { empty += 1 }
                }
                feeds[index].answers[position] = answer.state
                if visible.contains(position) { feeds[index].rendered.insert(position) }
            }
            checkSeparation(feeds[index], separation, seed: seed, violations: &violations)
            // The client returns some rendered ads shown (billing); the feed keeps answering them.
            for position in feeds[index].rendered.sorted() where random.chance(0.05) {
                if case .ad(let lease)? = feeds[index].answers[position], h.loader.hasLease(lease.id) {
                    _ = try? h.loader.returnLease(lease.id, shown: true)
                }
            }
            if random.chance(0.02) { checkOneAdOnePosition(feeds, h, seed: seed, violations: &violations) }
        }
        checkOneAdOnePosition(feeds, h, seed: seed, violations: &violations)
        _ = lost
        return (calls, filled, coming, empty, h.loader.feedStats.separationHolds)
    }

    func checkSeparation(_ feed: ModelFeed, _ rules: SeparationRules, seed: UInt64, violations: inout Violations) {
        let ads = feed.answers.compactMap { position, state -> (Int, Ad)? in
            if case .ad(let lease) = state { (position, lease.ad) } else { nil }
        }.sorted { $0.0 < $1.0 }
        var ids = Set<String>()
        var creatives = Set<String>()
        for (i, (p, a)) in ads.enumerated() {
            if !ids.insert(a.id).inserted {
                violations.flag(\.adsInTwoPositions, "seed \(seed): ad \(a.id) twice in a feed")
            }
            if rules.creativeOncePerFeed, !creatives.insert(a.creativeID ?? "").inserted {
                violations.flag(\.separation, "seed \(seed): creative \(a.creativeID ?? "") twice in a feed")
            }
            for (q, b) in ads[(i + 1)...] {
                let d = q - p
                if let c = rules.creativeDistance, d < c, a.creativeID == b.creativeID {
                    violations.flag(\.separation, "seed \(seed): creative at \(p) and \(q)")
                }
                if let c = rules.advertiserDomainDistance, d < c, a.advertiserDomains == b.advertiserDomains {
                    violations.flag(\.separation, "seed \(seed): advertiser at \(p) and \(q)")
                }
                if let c = rules.categoryDistance, d < c, a.categories == b.categories {
                    violations.flag(\.separation, "seed \(seed): category at \(p) and \(q)")
                }
            }
        }
    }

    /// Across every feed, an ad whose lease is open is answered at one position only.
    func checkOneAdOnePosition(_ feeds: [ModelFeed], _ h: Harness, seed: UInt64, violations: inout Violations) {
        var holder: [String: (Int, Int)] = [:]
        for (index, feed) in feeds.enumerated() {
            for (position, state) in feed.answers {
                guard case .ad(let lease) = state, h.loader.hasLease(lease.id) else { continue }
                if let other = holder[lease.ad.id], other != (index, position) {
                    violations.flag(
                        \.adsInTwoPositions, "seed \(seed): ad \(lease.ad.id) at \(other) and \((index, position))")
                }
                holder[lease.ad.id] = (index, position)
            }
        }
    }
}
