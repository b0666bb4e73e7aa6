import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct NativeAdvertisementLoaderExpiryTests {
    @Test func adsExpireAtTheSoonerOfLifetimeAndSourceExpiry() throws {
        let h = try Harness { $0.lifetime = .seconds(600); $0.numberOfAdvertisements = 1; $0.maximumRetainedAdvertisements = 2 }
        try h.loader.prefetch(adUnitID: "unit")
        let start = h.clock.now
        h.source.succeed(0, sourceExpiry: start + .seconds(60))
        h.source.succeed(0, sourceExpiry: start + .seconds(6000))
        let a = try h.lease()
        let b = try h.lease()
        #expect(a.ad.expiresAt == start + .seconds(60))
        #expect(b.ad.expiresAt == start + .seconds(600))
        #expect(a.ad.loadedAt == start)
    }

    @Test func anExpiredAdIsNeverLentEvenBeforeASweep() throws {
        let h = try Harness { $0.lifetime = .seconds(100); $0.sweepInterval = .seconds(1000) }
        try h.fill()
        h.clock.advance(by: .seconds(100))
        #expect(h.stats().expired == 0)  // no sweep yet
        #expect(try h.borrow() == .noAdYet)
        let stats = h.stats()
        #expect(stats.expired == 10)
        #expect(stats.available == 0)
        #expect(stats.isBalanced)
        #expect(h.source.pendingAds == 10)  // the miss topped up
    }

    @Test func anAdArrivingAlreadyExpiredIsNotKept() throws {
        let h = try Harness { $0.numberOfAdvertisements = 1; $0.maximumRetainedAdvertisements = 1 }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, sourceExpiry: h.clock.now)
        #expect(h.stats().expired == 1)
        #expect(try h.borrow() == .noAdYet)
    }

    @Test func theSweepExpiresDueAdsAndTopsUp() throws {
        let h = try Harness { $0.lifetime = .seconds(90); $0.sweepInterval = .seconds(60) }
        try h.fill()
        #expect(h.clock.pendingCount == 1)
        h.clock.advance(by: .seconds(60))
        #expect(h.stats().expired == 0)
        #expect(h.source.pending.isEmpty)  // a no-op sweep asks nothing
        h.clock.advance(by: .seconds(60))
        #expect(h.stats().expired == 10)
        #expect(h.events(.expired).count == 10)
        #expect(h.source.pendingAds == 10)
        // An empty pool has no sweep timer.
        #expect(h.clock.pendingCount == 0)
        h.source.succeedAll()
        #expect(h.clock.pendingCount == 1)
    }

    @Test func leasedAdsAreLeftToTheirLease() throws {
        let h = try Harness {
            $0.lifetime = .seconds(90)
            $0.sweepInterval = .seconds(60)
            $0.leaseTimeout = .seconds(1000)
        }
        try h.fill()
        let lease = try h.lease()
        h.clock.advance(by: .seconds(120))
        let stats = h.stats()
        #expect(stats.expired == 9)
        #expect(stats.leased == 1)
        #expect(try h.loader.returnLease(lease.id, shown: true) == .consumed)
    }

    @Test func aLargePoolSweepsOnlyWhatExpires() throws {
        // 50,000 ads expiring evenly over 50 s: each sweep removes exactly the ads due.
        let h = try Harness { $0.maximumRetainedAdvertisements = 50_000; $0.sweepInterval = .seconds(10) }
        try h.loader.prefetch(adUnitID: "unit")
        let start = h.clock.now
        var index = 0
        while !h.source.pending.isEmpty {
            h.source.succeed(0, sourceExpiry: start + .milliseconds(Int64(5 * (index + 1))))
            index += 1
        }
        var previous: UInt64 = 0
        for step in 1...3 {
            h.clock.advance(by: .seconds(10))
            let expired = h.stats().expired
            #expect(expired > previous)
            #expect(h.stats().available == 50_000 - step * 10_000)
            #expect(expired == UInt64(step * 10_000))
            previous = expired
        }
    }
}
