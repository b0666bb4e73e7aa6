import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// Beyond the daemon-wide memory budget (`limits.maximumAds`), a pool with demand gets room
/// from the least useful ads: idle pools' first, soonest expiry first, then other pools'
/// stock beyond their own target; never a leased ad; bounded work per top-up.
struct MemoryBudgetEvictionTests {
    /// Fixed pools of 10 (5 per request), idle after 60 s, kept long.
    static func harness(maximumAds: Int, _ configure: (inout LoaderConfiguration) -> Void = { _ in }) throws -> Harness
    {
        let h = try Harness {
            $0.idleTimeout = .seconds(60)
            $0.poolRemovalTimeout = .seconds(86_400)
            $0.lifetime = .seconds(3_600)
            configure(&$0)
        }
        h.loader.maximumAds = maximumAds
        return h
    }

    /// Prefetches `unit` and answers its requests, each with the given source expiry.
    static func fill(_ h: Harness, _ unit: String, expiries: [Duration]) throws {
        try h.loader.prefetch(adUnitID: unit)
        #expect(h.source.pending.count == expiries.count, "\(unit): \(h.source.pending.count) requests")
        for expiry in expiries { h.source.succeed(0, sourceExpiry: h.clock.now + expiry) }
    }

    func memoryDrops(_ h: Harness) -> [AdEvent] {
        h.events(.removed).filter { $0.reason == .memoryBudget }
    }

    @Test func idlePoolsGiveTheirSoonestExpiringAdsFirst() throws {
        let h = try Self.harness(maximumAds: 30)
        // Two pools that go idle; their ads expire interleaved: x@100 s, a@200 s, a@300 s, x@400 s.
        try Self.fill(h, "a", expiries: [.seconds(200), .seconds(300)])
        try Self.fill(h, "x", expiries: [.seconds(100), .seconds(400)])
        h.clock.advance(by: .seconds(50))
        // A busy pool at its target: never touched.
        try Self.fill(h, "b", expiries: [.seconds(3_000), .seconds(3_000)])
        #expect(h.loader.adsHeld == 30)
        h.clock.advance(by: .seconds(25))  // a and x idle (75 s), b not (25 s)
        h.clearEvents()

        // A borrow of an empty busy pool: the budget is full, so idle ads make room for it.
        _ = try h.borrow("c")
        let dropped = memoryDrops(h)
        #expect(dropped.count == 10)
        #expect(dropped.prefix(5).allSatisfy { $0.adUnitID == "x" })
        #expect(dropped.suffix(5).allSatisfy { $0.adUnitID == "a" })
        #expect(h.stats("x").available == 5 && h.stats("x").droppedForMemory == 5)
        #expect(h.stats("a").available == 5 && h.stats("a").droppedForMemory == 5)
        #expect(h.stats("b").available == 10 && h.stats("b").droppedForMemory == 0)
        // The room went to the busy pool's top-up: both batches asked, nothing refused.
        #expect(h.source.pendingAds == 10)
        #expect(h.stats("c").budgetRefused == 0)
        #expect(h.loader.adsHeld == 30)
        // Counted as removed (the accounting stays balanced) and told to the source.
        #expect(h.stats("x").removed == 5 && h.stats("x").isBalanced && h.stats("a").isBalanced)
        #expect(h.source.dropped.filter { $0.reason == .memoryBudget }.count == 10)
    }

    @Test func onlyAPoolWithDemandMakesRoom() throws {
        let h = try Self.harness(maximumAds: 10)
        try Self.fill(h, "a", expiries: [.seconds(500), .seconds(500)])
        h.clock.advance(by: .seconds(120))  // a idle
        h.clearEvents()
        // A Prefetch gives c demand: a's idle ads make room for it.
        try h.loader.prefetch(adUnitID: "c")
        #expect(memoryDrops(h).count == 10)
        h.source.succeedAll()
        // Both idle now: sweeps run and time passes, but no idle pool makes room for itself.
        h.clearEvents()
        h.clock.advance(by: .seconds(3_000))
        #expect(memoryDrops(h).isEmpty)
        #expect(h.source.pending.isEmpty)
    }

    @Test func leasedAdsAndBusyPoolsTargetsAreKept() throws {
        let h = try Self.harness(maximumAds: 20, { $0.idleTimeout = .seconds(86_400) })
        try Self.fill(h, "a", expiries: [.seconds(100), .seconds(100)])
        try Self.fill(h, "b", expiries: [.seconds(200), .seconds(200)])
        // Two of a's soonest ads are out on lease.
        let leases = [try h.lease("a", slot: "s1"), try h.lease("a", slot: "s2")]
        // A reload lowers every pool's target to 6: a and b each hold 4 beyond it.
        var lower = h.configuration
        lower.maximumRetainedAdvertisements = 6
        _ = try h.loader.reconfigure(loaders: [lower])
        h.clearEvents()

        _ = try h.borrow("c")  // wants a batch of 5 (fixed target 6, whole batches)
        let dropped = memoryDrops(h)
        #expect(dropped.count == 5)
        let leasedIDs = Set(leases.map(\.ad.id))
        #expect(!dropped.contains { leasedIDs.contains($0.adID ?? "") })
        // a's excess (4, its soonest unleased) goes first, then one of b's.
        #expect(dropped.filter { $0.adUnitID == "a" }.count == 4)
        #expect(dropped.filter { $0.adUnitID == "b" }.count == 1)
        let a = h.stats("a")
        #expect(a.leased == 2 && a.available + a.leased == 6)
        #expect(h.stats("b").available == 9)
        #expect(h.source.pendingAds == 5)

        // Another refused top-up: a is at its target and b keeps its own (6): b gives 3, no more.
        _ = try h.borrow("d")
        #expect(memoryDrops(h).count == 8)
        #expect(h.stats("a").available + h.stats("a").leased == 6)
        #expect(h.stats("b").available == 6)
        #expect(h.stats("d").budgetRefused > 0)
        #expect(h.loader.adsHeld <= 20)
    }

    @Test func eachTopUpDropsAtMostAFewBatches() throws {
        let h = try Self.harness(maximumAds: 100, { $0.maximumRetainedAdvertisements = 50 })
        try Self.fill(h, "a", expiries: Array(repeating: .seconds(1_000), count: 10))
        try Self.fill(h, "b", expiries: Array(repeating: .seconds(2_000), count: 10))
        h.clock.advance(by: .seconds(120))  // both idle
        h.clearEvents()

        _ = try h.borrow("c")  // wants 50: the first call drops 4 batches (20), no more
        #expect(memoryDrops(h).count == NativeAdvertisementLoader.memoryEvictionBatches * 5)
        #expect(h.source.pendingAds == 20)
        #expect(h.stats("c").budgetRefused == 30)
        #expect(h.stats("a").available == 30 && h.stats("b").available == 50)

        _ = try h.borrow("c")  // the next top-up makes the next 20 of room
        #expect(memoryDrops(h).count == 40)
        #expect(h.stats("a").available == 10 && h.stats("b").available == 50)
        #expect(h.loader.adsHeld == 100)
    }
}
