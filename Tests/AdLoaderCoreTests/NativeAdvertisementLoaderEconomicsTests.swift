import AdLoaderTestSupport
import Testing

@testable import AdLoaderCore

/// Pool economics: lending with a margin, fail fast, the concurrency cap, idle pools and
/// their removal, demand sizing.
struct NativeAdvertisementLoaderEconomicsTests {
    // MARK: - Lending with a margin

    @Test func anAdIsLentOnlyWithTheMinimumLifeLeftAndTheLeaseEndsWithIt() throws {
        let h = try Harness {
            $0.lifetime = .seconds(1_000)
            $0.leaseTimeout = .seconds(300)
            $0.minimumRemainingLife = .seconds(300)  // set: it holds whatever the ads' life
            $0.numberOfAdvertisements = 2
            $0.maximumRetainedAdvertisements = 2
        }
        var reported: [(String, String, Duration)] = []
        h.loader.onExpiredOnArrival = { reported.append(($0, $1, $2)) }
        try h.loader.prefetch(adUnitID: "unit")
        // One ad with 200 s left (below the 300 s minimum): dropped as expired on arrival,
        // counted, and reported once for its source.
        h.source.succeed(0, fill: 1, sourceExpiry: h.clock.now + .seconds(200))
        #expect(h.stats().expired == 1)
        #expect(h.stats().expiredOnArrival == 1)
        #expect(h.stats().available == 0)
        #expect(reported.count == 1)
        #expect(reported.first?.0 == "default" && reported.first?.2 == .seconds(300))
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeedAll()
        // Lent with 1,000 s left: the lease ends at the timeout, 300 s from now.
        let lease = try h.lease()
        #expect(lease.expiresAt == h.clock.now + .seconds(300))
        // 650 s later the other ad has 350 s left: still lendable, its lease still 300 s.
        h.clock.advance(by: .seconds(650))
        let second = try h.lease()
        #expect(second.expiresAt == h.clock.now + .seconds(300))
        #expect(second.expiresAt <= second.ad.expiresAt)
        // Returned with 340 s left, then 50 s later it has 290 s: no longer lendable, dropped.
        #expect(try h.loader.returnLease(second.id, shown: false) == .backInPool)
        h.clock.advance(by: .seconds(50))
        #expect(try h.borrow() == .noAdYet)
        #expect(h.stats().available == 0)
    }

    /// The default minimum follows the ads' real life: a quarter of it, at most the lease
    /// timeout. Bids that live 300 s (shorter than `lifetime`) are lent, not dropped.
    @Test func theDefaultMinimumLifeFollowsTheAdsLife() throws {
        let h = try Harness {
            $0.lifetime = .seconds(3_600)
            $0.leaseTimeout = .seconds(300)
            $0.minimumRemainingLife = nil
            $0.numberOfAdvertisements = 2
            $0.maximumRetainedAdvertisements = 4
        }
        var reported = 0
        h.loader.onExpiredOnArrival = { _, _, _ in reported += 1 }
        #expect(h.configuration.effectiveMinimumRemainingLife == .seconds(300))
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.stats().minimumRemainingLifeMilliseconds == 300_000)
        // Bids that live 300 s: the pool's minimum becomes 75 s, and both are lent.
        h.source.succeed(0, sourceExpiry: h.clock.now + .seconds(300))
        #expect(h.stats().minimumRemainingLifeMilliseconds == 75_000)
        #expect(h.stats().available == 2 && h.stats().expiredOnArrival == 0 && reported == 0)
        let lease = try h.lease()
        #expect(lease.expiresAt == lease.ad.expiresAt)  // the lease ends with its ad
        // 230 s later the other has 70 s left: below 75 s, no longer lent.
        h.clock.advance(by: .seconds(230))
        #expect(try h.borrow() == .noAdYet)
        #expect(h.stats().expired == 1)
        // A short lifetime with the default minimum starts (it used to be refused at start:
        // the default was the lease timeout, not below a 300 s lifetime).
        var short = LoaderConfiguration()
        short.lifetime = .seconds(300)
        #expect(throws: Never.self) { try short.validate() }
        #expect(short.effectiveMinimumRemainingLife == .seconds(75))
    }

    @Test func aLeaseNeverOutlivesItsAd() throws {
        let h = try Harness {
            $0.lifetime = .seconds(100)
            $0.leaseTimeout = .seconds(300)
            $0.minimumRemainingLife = .seconds(10)
        }
        try h.fill()
        let lease = try h.lease()
        #expect(lease.expiresAt == lease.ad.expiresAt)
        h.clock.advance(by: .seconds(100))
        #expect(h.stats().leasesReclaimed == 1)
        #expect(h.stats().leased == 0)
    }

    @Test func aReusedBorrowRenewsTheLeaseAndSwapsAnAdTooCloseToExpiry() throws {
        let h = try Harness {
            $0.lifetime = .seconds(1_000)
            $0.leaseTimeout = .seconds(300)
            $0.minimumRemainingLife = .seconds(300)
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 1
        }
        try h.fill()
        let first = try h.lease(slot: "cell")
        h.clock.advance(by: .seconds(200))
        // The other ad is shown and consumed; its replacement expires 200 s after the first.
        try h.loader.returnLease(try h.lease().id, shown: true)
        h.source.succeedAll()
        // Renewed: 300 s from now, past the original timeout.
        guard case .leased(let renewed, reused: true) = try h.borrow(slot: "cell") else {
            throw TestFailure("expected the slot's lease")
        }
        #expect(renewed.id == first.id)
        #expect(renewed.expiresAt == h.clock.now + .seconds(300))
        // Past the first timeout, the lease holds.
        h.clock.advance(by: .seconds(250))
        #expect(h.stats().leasesReclaimed == 0)
        // 450 s in: 550 s left. Renew again: bounded by nothing yet (550 > 300).
        _ = try h.borrow(slot: "cell")
        h.clock.advance(by: .seconds(290))
        // 740 s in: 260 s left, below the minimum: a fresh ad, the old one dropped as expired.
        h.clearEvents()
        guard case .leased(let fresh, reused: false) = try h.borrow(slot: "cell") else {
            throw TestFailure("expected a fresh lease")
        }
        #expect(fresh.ad.id != first.ad.id)
        #expect(h.events(.returned).first?.reason == .expired)
        #expect(h.events(.expired).map(\.adID) == [first.ad.id])
    }

    @Test func notFoundSaysHowTheLeaseEnded() throws {
        let h = try Harness { $0.leaseTimeout = .seconds(10) }
        try h.fill()
        let returned = try h.lease()
        try h.loader.returnLease(returned.id, shown: false)
        let reclaimed = try h.lease()
        h.clock.advance(by: .seconds(10))
        func message(_ id: UInt64) -> String {
            do {
                try h.loader.returnLease(id, shown: false)
                return "returned"
            } catch {
                #expect(error.code == .notFound)
                #expect(error.field == "lease_id")
                return error.message
            }
        }
        #expect(message(returned.id).contains("already returned"))
        #expect(message(reclaimed.id).contains("reclaimed by the lease timeout"))
        #expect(message(12_345).contains("never lent"))
        // The memory of ended leases is bounded; older ones still read as ended.
        for _ in 0..<LeaseTable.endedMemory {
            let lease = try h.lease()
            try h.loader.returnLease(lease.id, shown: false)
        }
        #expect(message(returned.id).contains("has ended"))
        #expect(message(12_345).contains("never lent"))
    }

    @Test func leaseIDsCarryTheReplicaAndAForeignOneNamesItsLender() throws {
        let h = try Harness()
        h.loader.leaseReplica = 7
        try h.fill()
        let lease = try h.lease()
        #expect(NativeAdvertisementLoader.lendingReplica(of: lease.id) == 7)
        func message(_ id: UInt64) -> String {
            do {
                try h.loader.returnLease(id, shown: false)
                return "returned"
            } catch {
                #expect(error.code == .notFound)
                return error.message
            }
        }
        // The same low bits under replica 9: another replica's lease.
        let foreign = (lease.id & ((1 << 52) - 1)) | 9 << 52
        #expect(message(foreign) == "lease \(foreign) was lent by replica 9, not this one (replica 7)")
        // Index 0 names no replica: an id from outside any fleet was never lent here.
        #expect(message(12_345).contains("never lent"))
        #expect(message(lease.id) == "returned")
    }

    // MARK: - Fail fast

    @Test func parkedBorrowsFailFastWhenTheSourceIsUnreachable() throws {
        let h = try Harness()
        var answers: [BorrowResult] = []
        let outcome = try h.loader.borrow(adUnitID: "unit", wait: .seconds(30)) { answers.append($0) }
        #expect(outcome.parked != nil)
        h.source.failAll(.unreachable)
        guard case .upstreamFailed(let error)? = answers.first else {
            throw TestFailure("expected a fail-fast answer, got \(answers)")
        }
        #expect(error.code == .unreachable)
        #expect(h.stats().parkedBorrows == 0)
        // While unreachable, a borrow that would wait answers at once.
        let again = try h.loader.borrow(adUnitID: "unit", wait: .seconds(30)) { _ in Issue.record("parked") }
        guard case .upstreamFailed? = again.answer else { throw TestFailure("expected fail fast, got \(again)") }
        #expect(h.stats().isBalanced)
    }

    @Test func parkedBorrowsFailFastAfterAFinalError() throws {
        let h = try Harness()
        var answers: [BorrowResult] = []
        _ = try h.loader.borrow(adUnitID: "unit", wait: .seconds(30)) { answers.append($0) }
        // Two requests were sent (10 missing, batch 5): the first failure leaves one in flight.
        h.source.fail(0, .final)
        #expect(answers.isEmpty)
        h.source.fail(0, .final)
        guard case .upstreamFailed(let error)? = answers.first else { throw TestFailure("got \(answers)") }
        #expect(error.code == .final)
    }

    // MARK: - Upstream budget

    @Test func aPoolNeverHasMoreRequestsInFlightThanTheCap() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 40
            $0.numberOfAdvertisements = 5
            $0.maximumConcurrentRequests = 3
        }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.pending.count == 3)
        #expect(h.stats().requestsInFlight == 3)
        // Each answer frees a place for the next whole batch.
        while !h.source.pending.isEmpty {
            #expect(h.source.pending.count <= 3)
            h.source.succeed()
        }
        #expect(h.stats().available == 40)
        #expect(h.source.requests.count == 8)
    }

    // MARK: - Idle pools

    @Test func anIdlePoolStopsToppingUpAndIsRemovedOnceEmpty() throws {
        let h = try Harness {
            $0.lifetime = .seconds(1_200)
            $0.sweepInterval = .seconds(60)
            $0.idleTimeout = .seconds(600)
            $0.poolRemovalTimeout = .seconds(1_800)
        }
        try h.fill()
        // Before the idle time, an expiry is refilled; the pool is not idle.
        #expect(!h.stats().idle)
        h.clock.advance(by: .seconds(601))
        #expect(h.stats().idle)
        let requests = h.source.requests.count
        // The ads expire at 1,200 s: the sweep drops them and asks for nothing.
        h.clock.advance(by: .seconds(700))
        #expect(h.stats().expired == 10)
        #expect(h.source.requests.count == requests)
        #expect(h.stats().available == 0)
        // Empty and without demand for 1,800 s: removed, with an event.
        h.clock.advance(by: .seconds(600))
        #expect(h.loader.stats().isEmpty)
        #expect(h.events(.poolRemoved).count == 1)
        #expect(h.clock.pendingCount == 0)
        // A borrow creates it again, fresh (the loader's last-pool cache was cleared).
        #expect(try h.borrow() == .noAdYet)
        #expect(h.stats().loaded == 0)
        #expect(h.stats().borrowMisses == 1)
        #expect(h.source.pending.count == 2)
    }

    @Test func aPoolHoldingALeaseIsNotRemoved() throws {
        let h = try Harness {
            $0.lifetime = .seconds(7_200)
            $0.leaseTimeout = .seconds(3_600)
            $0.idleTimeout = .seconds(60)
            $0.poolRemovalTimeout = .seconds(60)
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        try h.fill()
        let lease = try h.lease()
        h.clock.advance(by: .seconds(600))
        #expect(h.loader.stats().count == 1)
        #expect(h.source.pending.isEmpty)  // idle: the lent ad is not replaced
        #expect(try h.loader.returnLease(lease.id, shown: true) == .consumed)
        #expect(h.source.pending.isEmpty)
        h.clock.advance(by: .seconds(60))
        #expect(h.loader.stats().isEmpty)
    }

    @Test func anIdlePoolDoesNotProbe() throws {
        let h = try Harness {
            $0.idleTimeout = .seconds(60)
            $0.poolRemovalTimeout = .seconds(60)
            $0.retry.probeInterval = .seconds(30)
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.failAll(.unreachable)
        h.clock.advance(by: .seconds(30))
        #expect(h.source.pending.count == 1)  // a probe while not idle
        h.source.failAll(.unreachable)
        let requests = h.source.requests.count
        h.clock.advance(by: .seconds(600))
        #expect(h.source.requests.count == requests)
        #expect(h.loader.stats().isEmpty)
    }

    // MARK: - Demand sizing

    @Test func aDemandSizedPoolFollowsTheBorrowRate() throws {
        let h = try Harness {
            $0.sizing = .demand
            $0.maximumRetainedAdvertisements = 1_000
            $0.numberOfAdvertisements = 5
            $0.maximumConcurrentRequests = 100
            $0.stockCover = .zero  // the refill model alone (the cover: the next test)
        }
        // A fresh pool asks for one batch.
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.pendingAds == 5)
        h.source.succeedAll()
        #expect(h.stats().target == 5)
        // 20 borrows a second for a minute, each returned shown at once.
        for _ in 0..<60 {
            for _ in 0..<20 {
                if case .leased(let lease, _) = try h.borrow() { try h.loader.returnLease(lease.id, shown: true) }
                h.source.succeedAll()
            }
            h.clock.advance(by: .seconds(1))
        }
        let busy = h.stats().target
        // λ = 20/s, T = 2 · ~0 ms latency + 250 ms: about 5 + 3·√5 + 5 ads.
        #expect(busy >= 15 && busy <= 25, "target \(busy)")
        #expect(h.stats().available + h.stats().inFlight <= busy)
        // Quiet for ten minutes: the target falls back to one batch.
        h.clock.advance(by: .seconds(600))
        _ = try h.borrow()
        // One batch, plus what the borrow just seen adds (its own window) and its lease.
        #expect(h.stats().target <= 8)
    }

    /// The cover keeps `rate × stockCover` in stock, bounded by a tenth of the lendable life;
    /// one borrow after a quiet spell does not buy a cover (the cover follows the lower of the
    /// fast and the slow average rate), and neither does a short burst.
    @Test func theStockCoversRecentDemandBoundedByTheAdsLife() throws {
        func target(cover: Duration, lifetime: Duration) throws -> (busy: Int, quiet: Int) {
            let h = try Harness {
                $0.sizing = .demand
                $0.configuredMaximumRetained = nil  // demand sizing bounded by its demand only
                $0.numberOfAdvertisements = 5
                $0.lifetime = lifetime
                $0.stockCover = cover
            }
            // Half an hour: the cover follows the slow average (a time constant of ~8 min).
            for _ in 0..<1_800 {
                for _ in 0..<20 {
                    if case .leased(let lease, _) = try h.borrow() { try h.loader.returnLease(lease.id, shown: true) }
                    h.source.succeedAll()
                }
                h.clock.advance(by: .seconds(1))
            }
            let busy = h.stats().target
            h.clock.advance(by: .seconds(600))
            _ = try h.borrow()
            return (busy, h.stats().target)
        }
        // 20 borrows/s, an hour's life, 60 s of cover: about 1,200 ads.
        let covered = try target(cover: .seconds(60), lifetime: .seconds(3_600))
        #expect(covered.busy >= 1_000 && covered.busy <= 1_300, "target \(covered.busy)")
        #expect(covered.quiet <= 8, "after quiet \(covered.quiet)")
        // A 300 s life bounds the cover to 30 s: about 600.
        let short = try target(cover: .seconds(60), lifetime: .seconds(300))
        #expect(short.busy >= 450 && short.busy <= 650, "target \(short.busy)")
        // A one-minute burst of 20/s in a quiet pool: the slow average keeps the cover small.
        let h = try Harness {
            $0.sizing = .demand
            $0.configuredMaximumRetained = nil
            $0.numberOfAdvertisements = 5
            $0.stockCover = .seconds(60)
        }
        for _ in 0..<60 {
            for _ in 0..<20 {
                if case .leased(let lease, _) = try h.borrow() { try h.loader.returnLease(lease.id, shown: true) }
                h.source.succeedAll()
            }
            h.clock.advance(by: .seconds(1))
        }
        #expect(h.stats().target <= 200, "target after a one-minute burst \(h.stats().target)")
    }

    @Test func theDemandTargetIsBoundedByTheMemoryBound() throws {
        let h = try Harness {
            $0.sizing = .demand
            $0.maximumRetainedAdvertisements = 12
            $0.numberOfAdvertisements = 5
        }
        for _ in 0..<500 { _ = try h.borrow() }
        #expect(h.stats().target == 12)
        #expect(h.stats().inFlight <= 12)
    }

    @Test func configurationRefusesAMinimumLifeNotBelowTheLifetime() {
        var configuration = LoaderConfiguration()
        configuration.lifetime = .seconds(200)
        // The default follows the lifetime (50 s here): accepted.
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.minimumRemainingLife = .seconds(200)
        #expect(throws: ConfigError.self) { try configuration.validate() }
        configuration.minimumRemainingLife = .seconds(100)
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.maximumConcurrentRequests = 0
        #expect(throws: ConfigError.self) { try configuration.validate() }
        configuration.maximumConcurrentRequests = 3
        configuration.poolRemovalTimeout = .seconds(1)
        #expect(throws: ConfigError.self) { try configuration.validate() }
    }
}
