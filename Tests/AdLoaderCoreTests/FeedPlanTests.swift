import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// The feed plan on the manual clock: stable answers, no ad popping in, separation, bounds.
@Suite struct FeedPlanTests {
    /// A harness whose ads have advertiser `n % advertisers` and category `n % categories`.
    func harness(
        advertisers: Int = 1_000, categories: Int = 1_000, _ configure: (inout LoaderConfiguration) -> Void = { _ in }
    ) throws -> Harness {
        let harness = try Harness {
            $0.maximumRetainedAdvertisements = 20
            $0.placement = PlacementRules(fixedPositions: [1], repeatingInterval: 3)
            $0.separation = SeparationRules(advertiserDomainDistance: 4, categoryDistance: nil)
            configure(&$0)
        }
        harness.source.advertiserDomains = { ["adv\($0 % advertisers).example"] }
        harness.source.categories = { ["IAB\($0 % categories)"] }
        harness.source.creativeID = { "c\($0)" }
        return harness
    }

    func plan(_ h: Harness, _ feed: String = "f", visible: ClosedRange<Int>, ahead: Int = 3) throws -> FeedPlan {
        try h.loader.plan(PlanRequest(feedID: feed, adUnitID: "unit", visible: visible, ahead: ahead))
    }

    @Test func scrollingBackGetsTheSameLeases() throws {
        let h = try harness()
        try h.fill()
        let first = try plan(h, visible: 0...7)
        #expect(first.created)
        #expect(first.positions.map(\.position) == [1, 4, 7, 10])
        #expect(first.positions.allSatisfy { $0.isGuaranteed })
        let leases = first.positions.compactMap { if case .ad(let lease) = $0.state { lease } else { nil } }
        #expect(Set(leases.map(\.ad.id)).count == 4 && leases[0].slot == "f#1")
        h.clock.advance(by: .seconds(10))
        let down = try plan(h, visible: 8...15)
        #expect(down.positions.map(\.position) == [10, 13, 16])
        guard case .ad(let ahead) = first.positions[3].state, case .ad(let shown) = down.positions[0].state else {
            throw TestFailure("not an ad")
        }
        #expect(ahead.id == shown.id && ahead.ad.id == shown.ad.id, "the look-ahead's ad is the one shown")
        #expect(shown.expiresAt > ahead.expiresAt, "each call renews the lease")
        let back = try plan(h, visible: 0...7)
        #expect(!back.created)
        for (a, b) in zip(first.positions, back.positions) {
            guard case .ad(let x) = a.state, case .ad(let y) = b.state else { throw TestFailure("not an ad") }
            #expect(x.id == y.id && x.ad.id == y.ad.id)
        }
        #expect(h.loader.feedStats.feedsHeld == 1)
        #expect(h.loader.feedStats.positionsFilled == 6)
    }

    @Test func aPositionRenderedWithoutAnAdNeverGetsOne() throws {
        let h = try harness()
        let first = try plan(h, visible: 0...4, ahead: 3)
        #expect(first.positions.map(\.state) == [.empty, .empty, .coming], "empty pool: visible empty, ahead coming")
        #expect(!h.source.pending.isEmpty, "the plan asked upstream")
        h.source.succeedAll()
        let second = try plan(h, visible: 0...7, ahead: 3)
        #expect(second.positions[0].state == .empty && second.positions[1].state == .empty, "no ad pops in")
        #expect(second.positions[2].isGuaranteed, "the coming position got its ad before it was rendered")
        #expect(second.positions[3].isGuaranteed)
        #expect(h.loader.feedStats.positionsEmpty == 2 && h.loader.feedStats.comingAnswers == 1)
    }

    @Test func separationHoldsAPositionComingAndAsksForMore() throws {
        // Every ad of one advertiser: only the first may be placed within distance 4.
        let h = try harness(advertisers: 1) {
            $0.placement = PlacementRules(fixedPositions: [], repeatingInterval: 3)
            $0.sizing = .demand
        }
        try h.loader.prefetch(adUnitID: "unit", count: 5)
        h.source.succeedAll()
        #expect(h.stats().available == 5)
        let requestsBefore = h.source.requests.count
        let plan1 = try plan(h, visible: 0...5, ahead: 0)
        #expect(plan1.positions.map(\.position) == [2, 5])
        #expect(plan1.positions[0].isGuaranteed, "distance 3 < 4: the second is held")
        #expect(plan1.positions[1].state == .empty)
        #expect(h.loader.feedStats.separationHolds == 1)
        #expect(h.source.requests.count > requestsBefore, "the pool asks for ads beyond the excluded ones")
        // Distance 6 is allowed.
        let plan2 = try plan(h, visible: 6...8, ahead: 0)
        #expect(plan2.positions.map(\.position) == [8] && plan2.positions[0].isGuaranteed)
    }

    @Test func noCreativeTwicePerFeedNorOneAdInTwoPositions() throws {
        let h = try harness()
        h.source.creativeID = { "c\($0 % 3)" }
        try h.fill()
        let planned = try plan(h, visible: 0...20, ahead: 0)
        let ads = planned.positions.compactMap { if case .ad(let lease) = $0.state { lease.ad } else { nil } }
        #expect(ads.count == 3, "three creatives, each once")
        #expect(Set(ads.map(\.creativeID)).count == 3)
    }

    @Test func idleFeedsAreForgottenAndTheirUnrenderedLeasesReturned() throws {
        let h = try harness { $0.configuredFeedIdleTimeout = .seconds(60) }
        try h.fill()
        _ = try plan(h, visible: 0...4, ahead: 6)
        let leased = h.stats().leased
        #expect(leased == 4)
        h.clock.advance(by: .seconds(61))
        #expect(h.loader.feedStats.feedsHeld == 0 && h.loader.feedStats.feedsExpired == 1)
        #expect(h.stats().leased == 2, "the two rendered positions keep their leases; the two ahead went back")
    }

    @Test func feedCountIsBounded() throws {
        let h = try harness { $0.maximumFeeds = 2 }
        _ = try plan(h, "a", visible: 0...1)
        _ = try plan(h, "b", visible: 0...1)
        #expect(throws: LoaderError.self) { try plan(h, "c", visible: 0...1) }
        do { _ = try h.loader.plan(PlanRequest(feedID: "c", adUnitID: "unit", visible: 0...1)) } catch {
            #expect(error.code == .resourceExhausted && error.message.contains("feeds.maximum"))
        }
        _ = try plan(h, "a", visible: 2...3)
        #expect(h.loader.feedStats.feedsRefused == 2)
    }

    @Test func aFeedIsLentFromTheConsentClassOfItsSignalsTakenAtItsFirstCall() throws {
        let h = try harness()
        try h.fill()  // the default class's pool
        let coppa = PrivacySignals(coppa: true)
        let first = try h.loader.plan(
            PlanRequest(feedID: "kid", adUnitID: "unit", visible: 0...4, ahead: 3, privacy: coppa))
        #expect(first.positions.map(\.state) == [.empty, .empty, .coming], "the coppa pool is empty: no default ad")
        #expect(h.source.pending.contains { $0.request.consentClass == "coppa" }, "the plan asked for coppa ads")
        let other = try plan(h, "adult", visible: 0...4)
        #expect(other.positions.allSatisfy { $0.isGuaranteed }, "no signals: the default class's ads")
        // The feed's class is its first call's: signals that map elsewhere are refused, naming the field.
        for privacy in [nil, PrivacySignals(limitAdTracking: true)] {
            do {
                _ = try h.loader.plan(PlanRequest(feedID: "kid", adUnitID: "unit", visible: 0...7, privacy: privacy))
                Issue.record("a call with another consent class was answered")
            } catch {
                #expect(error.code == .invalidArgument && error.field == "privacy" && error.message.contains("coppa"))
            }
        }
        h.source.succeedAll()
        let second = try h.loader.plan(PlanRequest(feedID: "kid", adUnitID: "unit", visible: 0...7, privacy: coppa))
        guard case .ad(let lease) = second.positions[2].state else {
            throw TestFailure("the coming position got no ad")
        }
        let coppaPool = h.loader.stats(adUnitID: "unit").first { $0.consentClass == "coppa" }
        #expect(coppaPool?.leased ?? 0 >= 1, "its ads are the coppa pool's")
        let defaultAds = other.positions.compactMap { if case .ad(let l) = $0.state { l.ad.id } else { nil } }
        #expect(!defaultAds.contains(lease.ad.id))
    }

    @Test func badRequestsNameTheirField() throws {
        let h = try harness()
        func field(_ request: PlanRequest) -> String? {
            do {
                _ = try h.loader.plan(request)
                return nil
            } catch { return error.field }
        }
        #expect(field(PlanRequest(feedID: "", adUnitID: "unit", visible: 0...1)) == "feed_id")
        #expect(field(PlanRequest(feedID: "f", adUnitID: "unit", visible: -1...1)) == "visible")
        #expect(field(PlanRequest(feedID: "f", adUnitID: "unit", visible: 0...1, ahead: -1)) == "ahead")
        #expect(field(PlanRequest(feedID: "f", adUnitID: "unit", visible: 0...1_000)) == "visible")
        #expect(field(PlanRequest(feedID: "f", adUnitID: "unit", visible: 0...Int.max - 1)) == "visible")
        #expect(field(PlanRequest(feedID: "f", adUnitID: "", visible: 0...1)) == "ad_unit_id")
        let tooMany = PlacementRules(fixedPositions: [], repeatingInterval: 2, maximumAdsPerFeed: 300)
        #expect(
            field(PlanRequest(feedID: "f", adUnitID: "unit", visible: 0...1, placement: tooMany))
                == "placement.maximumAdsPerFeed")
        let bad = PlacementRules(fixedPositions: [], repeatingInterval: 1)
        #expect(
            field(PlanRequest(feedID: "f", adUnitID: "unit", visible: 0...1, placement: bad))
                == "placement.repeatingInterval")
        let own = PlacementRules(fixedPositions: [0], repeatingInterval: 2)
        #expect(field(PlanRequest(feedID: "g", adUnitID: "unit", visible: 0...1, placement: own)) == nil)
        #expect(
            field(PlanRequest(feedID: "g", adUnitID: "unit", visible: 0...1, placement: PlacementRules()))
                == "placement")
        #expect(h.loader.feedStats.feedsHeld == 1, "no feed made by a refused call")
    }
}
