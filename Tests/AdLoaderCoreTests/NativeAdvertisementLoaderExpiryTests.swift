import AdLoaderTestSupport
import Testing

@testable import AdLoaderCore

struct NativeAdvertisementLoaderExpiryTests {
    @Test func adsExpireAtTheSoonerOfLifetimeAndSourceExpiry() throws {
        let h = try Harness {
            $0.lifetime = .seconds(600)
            $0.numberOfAdvertisements = 1
            $0.maximumRetainedAdvertisements = 2
        }
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
        let h = try Harness {
            $0.lifetime = .seconds(100)
            $0.sweepInterval = .seconds(1000)
        }
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
        let h = try Harness {
            $0.numberOfAdvertisements = 1
            $0.maximumRetainedAdvertisements = 1
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, sourceExpiry: h.clock.now)
        #expect(h.stats().expired == 1)
        #expect(try h.borrow() == .noAdYet)
    }

    @Test func theSweepExpiresDueAdsAndTopsUp() throws {
        let h = try Harness {
            $0.lifetime = .seconds(90)
            $0.sweepInterval = .seconds(60)
        }
        try h.fill()
        // The sweep, and the pool's removal check (see NativeAdvertisementLoaderEconomicsTests).
        #expect(h.clock.pendingCount == 2)
        h.clock.advance(by: .seconds(60))
        #expect(h.stats().expired == 0)
        #expect(h.source.pending.isEmpty)  // a no-op sweep asks nothing
        h.clock.advance(by: .seconds(60))
        #expect(h.stats().expired == 10)
        #expect(h.events(.expired).count == 10)
        #expect(h.source.pendingAds == 10)
        // An empty pool has no sweep timer.
        #expect(h.clock.pendingCount == 1)
        h.source.succeedAll()
        #expect(h.clock.pendingCount == 2)
    }

    @Test func leasedAdsAreLeftToTheirLease() throws {
        let h = try Harness {
            $0.lifetime = .seconds(90)
            $0.sweepInterval = .seconds(60)
            $0.leaseTimeout = .seconds(1000)
        }
        try h.fill()
        let lease = try h.lease()
        // A lease never outlives its ad: it ends (reclaimed) when the ad expires, not at the
        // 1,000 s timeout.
        #expect(lease.expiresAt == lease.ad.expiresAt)
        h.clock.advance(by: .seconds(89))
        #expect(h.stats().leased == 1)
        h.clock.advance(by: .seconds(31))
        let stats = h.stats()
        #expect(stats.expired == 10)
        #expect(stats.leased == 0)
        #expect(stats.leasesReclaimed == 1)
    }

    @Test func aLargePoolSweepsOnlyWhatExpires() throws {
        // 50,000 ads expiring evenly over 50 s: each sweep removes exactly the ads due.
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 50_000
            $0.sweepInterval = .seconds(10)
        }
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

    // MARK: bounded sweeps

    /// A scheduler over a ``ManualClock`` that counts each callback's expirations.
    final class CountingScheduler: AdScheduler {
        let clock: ManualClock
        /// Ads expired during each callback that expired any, in order.
        private(set) var expiredPerCallback: [Int] = []
        private(set) var callbacks = 0
        var expiredSoFar: () -> Int = { 0 }
        /// Runs after every callback, as the loop would serve other work in between.
        var between: () -> Void = {}

        init(clock: ManualClock) { self.clock = clock }

        func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask {
            clock.schedule(at: deadline) { [unowned self] in
                let before = expiredSoFar()
                action()
                callbacks += 1
                let expired = expiredSoFar() - before
                if expired > 0 { expiredPerCallback.append(expired) }
                between()
            }
        }
    }

    /// A pool of `count` ads expiring together at 100 s and `valid` ads expiring at 7200 s.
    static func loaded(
        count: Int, valid: Int, sweepInterval: Duration
    ) throws -> (NativeAdvertisementLoader, FakeDemandSource, ManualClock, CountingScheduler) {
        let clock = ManualClock()
        let scheduler = CountingScheduler(clock: clock)
        let source = FakeDemandSource()
        var configuration = LoaderConfiguration.classic()
        configuration.source = "fake"
        configuration.maximumRetainedAdvertisements = count + valid
        configuration.lifetime = .seconds(7_200)
        configuration.sweepInterval = sweepInterval
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["fake": source], clock: clock, scheduler: scheduler)
        scheduler.expiredSoFar = { Int(loader.stats().first?.expired ?? 0) }
        try loader.prefetch(adUnitID: "unit")
        var due = count
        while !source.pending.isEmpty {
            source.succeed(0, sourceExpiry: due > 0 ? clock.now + .seconds(100) : nil)
            due -= 5
        }
        return (loader, source, clock, scheduler)
    }

    @Test func manyAdsExpiringAtOnceAreRemovedOverSeveralCallbacks() throws {
        let limit = NativeAdvertisementLoader.expiryBatchLimit
        let count = 5 * limit + 125
        let (loader, _, clock, scheduler) = try Self.loaded(count: count, valid: 50, sweepInterval: .seconds(100))
        var lent: [Lease] = []
        var misses = 0
        var purgedByBorrows: [Int] = []
        // Between callbacks, a borrow: it may purge a bounded share itself, never lend an expired ad.
        scheduler.between = {
            let before = Int(loader.stats().first?.expired ?? 0)
            let result = try? loader.borrow(adUnitID: "unit", whenServed: BorrowOutcome.neverServed).answer
            if case .leased(let lease, _)? = result { lent.append(lease) } else { misses += 1 }
            purgedByBorrows.append(Int(loader.stats().first?.expired ?? 0) - before)
        }
        clock.advance(by: .seconds(100))
        let stats = loader.stats()[0]
        #expect(stats.expired == UInt64(count))
        #expect(stats.isBalanced)
        // The sweep and the borrows between its callbacks shared the work, each at most `limit`.
        #expect(scheduler.expiredPerCallback.count >= 3)
        #expect(scheduler.expiredPerCallback.allSatisfy { $0 <= limit })
        #expect(purgedByBorrows.allSatisfy { $0 <= limit })
        #expect(scheduler.expiredPerCallback.reduce(0, +) + purgedByBorrows.reduce(0, +) == count)
        // While the backlog lasted, borrows missed rather than lend an expired ad; then they lent valid ones.
        #expect(misses > 0)
        #expect(!lent.isEmpty)
        #expect(lent.allSatisfy { $0.ad.expiresAt > clock.now })
        // The sweep is back on its interval.
        #expect(clock.nextDeadline == clock.now + .seconds(100))
    }

    @Test func aSweepContinuesInCallbacksDueAtOnce() throws {
        let limit = NativeAdvertisementLoader.expiryBatchLimit
        let count = 3 * limit
        let (loader, source, clock, scheduler) = try Self.loaded(count: count, valid: 0, sweepInterval: .seconds(100))
        let requestsBefore = source.requests.count
        var times: [AdInstant] = []
        scheduler.between = { times.append(clock.now) }
        clock.advance(by: .seconds(100))
        #expect(scheduler.expiredPerCallback == [limit, limit, limit])
        #expect(Set(times).count == 1)  // all at the sweep's deadline, one callback each
        #expect(loader.stats()[0].available == 0)
        // Each callback topped up the ads it expired, in whole batches.
        #expect(source.requests.count - requestsBefore == count / 5)
        #expect(source.requests.suffix(count / 5).allSatisfy { $0.count == 5 })
    }

    @Test func aBorrowPurgesABoundedShareAndNeverLendsAnExpiredAd() throws {
        let limit = NativeAdvertisementLoader.expiryBatchLimit
        let count = 2 * limit + 5
        // The sweep is far away: only borrows and their continuation remove expired ads.
        let (loader, _, clock, scheduler) = try Self.loaded(count: count, valid: 10, sweepInterval: .seconds(3_000))
        clock.advance(by: .seconds(100))
        #expect(scheduler.callbacks == 0)
        let answer = try loader.borrow(adUnitID: "unit", whenServed: BorrowOutcome.neverServed).answer
        #expect(answer == .noAdYet)  // expired ads still ahead of the valid ones: a miss
        #expect(loader.stats()[0].expired == UInt64(limit))
        // A parked borrow waits for the continuation rather than timing out or taking an expired ad.
        var parkedAnswer: BorrowResult?
        let parked = try loader.borrow(adUnitID: "unit", wait: .seconds(1)) { parkedAnswer = $0 }.parked
        #expect(parked != nil)
        #expect(loader.stats()[0].expired == UInt64(2 * limit))
        clock.runDue()
        #expect(scheduler.expiredPerCallback == [5])
        guard case .leased(let lease, reused: false)? = parkedAnswer else {
            throw TestFailure("parked borrow not served")
        }
        #expect(lease.ad.expiresAt > clock.now)
        #expect(loader.stats()[0].expired == UInt64(count))
        #expect(loader.stats()[0].isBalanced)
    }
}
