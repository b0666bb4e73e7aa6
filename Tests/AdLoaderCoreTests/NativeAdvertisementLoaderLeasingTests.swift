import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct NativeAdvertisementLoaderLeasingTests {
    // MARK: borrow

    @Test func borrowLendsTheAdThatExpiresSoonest() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 1
        }
        try h.loader.prefetch(adUnitID: "unit")
        let start = h.clock.now
        h.source.succeed(0, sourceExpiry: start + .seconds(900))
        h.source.succeed(0, sourceExpiry: start + .seconds(600))
        h.source.succeed(0)  // lifetime: 3600 s
        let lease = try h.lease()
        #expect(lease.ad.expiresAt == start + .seconds(600))
        #expect(lease.id != 0)
        #expect(lease.expiresAt == start + .seconds(300))
        #expect(try h.lease().ad.expiresAt == start + .seconds(900))
        #expect(try h.lease().ad.expiresAt == start + .seconds(3600))
        let stats = h.stats()
        #expect(stats.borrowHits == 3)
        #expect(stats.leased == 3)
    }

    @Test func slotAffinityReturnsTheSameLeaseWhileItHolds() throws {
        let h = try Harness()
        try h.fill()
        guard case .leased(let first, reused: false) = try h.borrow(slot: "feed/7") else {
            throw TestFailure("no lease")
        }
        #expect(first.slot == "feed/7")
        #expect(try h.borrow(slot: "feed/7") == .leased(first, reused: true))
        guard case .leased(let other, reused: false) = try h.borrow(slot: "feed/8") else {
            throw TestFailure("no lease")
        }
        #expect(other.ad.id != first.ad.id)
        #expect(h.events(.leased).count == 2)
        // Returning frees the slot: the next borrow for it is a fresh lease.
        try h.loader.returnLease(first.id, shown: false)
        guard case .leased(let again, reused: false) = try h.borrow(slot: "feed/7") else {
            throw TestFailure("no lease")
        }
        #expect(again.id != first.id)
    }

    @Test func aSlotWhoseAdIsTooCloseToExpiryGetsAFreshAd() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 1
            $0.minimumRemainingLife = .seconds(5)
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, sourceExpiry: h.clock.now + .seconds(10))
        h.source.succeed(0)
        let first = try h.lease(slot: "s")
        #expect(first.ad.expiresAt == h.clock.now + .seconds(10))
        // 4 s left, below the 5 s minimum: the slot's lease ends and its ad is dropped.
        h.clock.advance(by: .seconds(6))
        h.clearEvents()
        guard case .leased(let fresh, reused: false) = try h.borrow(slot: "s") else { throw TestFailure("no lease") }
        #expect(fresh.ad.id != first.ad.id)
        #expect(h.events.map(\.kind).prefix(3) == [.returned, .expired, .leased])
        #expect(h.events(.returned).first?.reason == .expired)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(first.id, shown: true) }
        #expect(h.stats().isBalanced)
    }

    @Test func aSlotWhoseAdWasDroppedWhileLeasedGetsAFreshAd() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 2
            $0.numberOfAdvertisements = 2
        }
        try h.fill()
        let first = try h.lease(slot: "s")
        // Disabled while the ad is out: the ad is marked, the lease stays with its cell.
        try h.loader.setEnabled(false, loader: "default")
        #expect(h.stats().leased == 1)
        try h.loader.setEnabled(true, loader: "default")
        h.clearEvents()
        // The slot does not get the dropped ad back: its lease ends (reason disabled), the ad
        // is removed, and the slot waits for a fresh ad.
        #expect(try h.borrow(slot: "s") == .noAdYet)
        #expect(h.events.map(\.kind).prefix(2) == [.returned, .removed])
        #expect(h.events(.returned).first?.reason == .disabled)
        #expect(h.events(.returned).first?.shown == false)
        #expect(h.events(.removed).first?.reason == .disabled)
        #expect(h.events(.removed).first?.adID == first.ad.id)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(first.id, shown: true) }
        h.source.succeedAll()
        guard case .leased(let fresh, reused: false) = try h.borrow(slot: "s") else { throw TestFailure("no lease") }
        #expect(fresh.ad.id != first.ad.id)
        let stats = h.stats()
        #expect(stats.isBalanced)
        #expect(stats.removed == 2)  // the available ad at disabling, then the leased one
    }

    @Test func emptyPoolAnswersNoAdYetAndStillTopsUp() throws {
        let h = try Harness()
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.map(\.count) == [5, 5])
        #expect(h.stats().borrowMisses == 1)
        // The miss's top-up already asked for everything: a second miss asks nothing.
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 2)
    }

    @Test func everyBorrowThatLeavesThePoolShortTopsUp() throws {
        let h = try Harness()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, fill: 0)  // a batch came back empty: 5 short, 5 coming
        #expect(h.source.requests.count == 2)
        h.source.succeed()
        _ = try h.lease()  // the borrow finds the pool a whole batch short
        #expect(h.source.requests.map(\.count) == [5, 5, 5])
        for _ in 0..<4 {
            let lease = try h.lease()
            try h.loader.returnLease(lease.id, shown: true)  // consumed: one more short each
        }
        #expect(h.source.requests.count == 3)  // 4 short, ads available: less than a batch waits
    }

    @Test func parkedBorrowsAreServedInOrderWhenAdsArrive() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 3
            $0.numberOfAdvertisements = 3
        }
        var answers: [String: BorrowResult] = [:]
        let a = try h.loader.borrow(adUnitID: "unit", slot: "a", wait: .seconds(2)) { answers["a"] = $0 }.parked
        let b = try h.loader.borrow(adUnitID: "unit", slot: "b", wait: .seconds(2)) { answers["b"] = $0 }.parked
        _ = try h.loader.borrow(adUnitID: "unit", slot: "c", wait: .seconds(2)) { answers["c"] = $0 }
        #expect(a != nil && b != nil)
        #expect(answers.isEmpty)
        #expect(h.stats().parkedBorrows == 3)
        #expect(h.source.requests.map(\.count) == [3])
        b?.cancel()
        #expect(h.stats().parkedBorrows == 2)
        h.source.succeed(0, fill: 1)
        guard case .leased(let leaseA, reused: false) = answers["a"] else { throw TestFailure("a not served") }
        #expect(leaseA.slot == "a")
        #expect(answers["b"] == nil)
        #expect(answers["c"] == nil)
        // The returned ad goes to the next parked borrow.
        try h.loader.returnLease(leaseA.id, shown: false)
        guard case .leased(let leaseC, reused: false) = answers["c"] else { throw TestFailure("c not served") }
        #expect(leaseC.ad.id == leaseA.ad.id)
        #expect(answers["b"] == nil)
        #expect(h.stats().parkedBorrows == 0)
    }

    @Test func aParkedBorrowTimesOutWithNoAdYet() throws {
        let h = try Harness()
        var answer: BorrowResult?
        let parked = try h.loader.borrow(adUnitID: "unit", wait: .milliseconds(1500)) { answer = $0 }.parked
        #expect(parked != nil)
        h.clock.advance(by: .milliseconds(1499))
        #expect(answer == nil)
        h.clock.advance(by: .milliseconds(1))
        #expect(answer == .noAdYet)
        #expect(h.stats().borrowMisses == 1)
        #expect(h.stats().parkedBorrows == 0)
        parked?.cancel()  // harmless after the answer
        h.source.succeedAll()
        #expect(h.stats().available == 10)
    }

    @Test func aCancelledParkedBorrowIsNeverAnswered() throws {
        let h = try Harness()
        var answered = false
        let parked = try h.loader.borrow(adUnitID: "unit", wait: .seconds(1)) { _ in answered = true }.parked
        parked?.cancel()
        h.source.succeedAll()
        h.clock.advance(by: .seconds(2))
        #expect(!answered)
        #expect(h.stats().borrowMisses == 0)
        #expect(h.stats().available == 10)
    }

    @Test(arguments: [Duration.milliseconds(-1), .milliseconds(30_001)], [true, false])
    func borrowRejectsAWaitOutOfRange(wait: Duration, mayPark: Bool) throws {
        let h = try Harness()
        do {
            _ = try h.loader.borrow(adUnitID: "unit", wait: wait, mayPark: mayPark) { _ in }
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.field == "wait_ms")
            #expect(error.message == "must be 0...30000 ms")
        }
        // Checked before anything happens: no pool, no request.
        #expect(h.loader.stats().isEmpty)
        #expect(h.source.requests.isEmpty)
    }

    // MARK: how a borrow is answered

    @Test func aBorrowAnsweredAtOnceNeverCallsWhenServed() throws {
        let h = try Harness()
        var calls = 0
        let whenServed = { (_: BorrowResult) in calls += 1 }
        #expect(try h.loader.borrow(adUnitID: "unit", slot: "s", whenServed: whenServed).answer == .noAdYet)
        h.source.succeedAll()
        let outcome = try h.loader.borrow(adUnitID: "unit", slot: "s", wait: .seconds(1), whenServed: whenServed)
        guard case .leased(let lease, reused: false)? = outcome.answer else {
            throw TestFailure("not lent: \(outcome)")
        }
        let again = try h.loader.borrow(adUnitID: "unit", slot: "s", wait: .seconds(1), whenServed: whenServed)
        guard case .leased(let reused, reused: true)? = again.answer else { throw TestFailure("not reused: \(again)") }
        #expect(reused.id == lease.id)
        h.clock.advance(by: .seconds(5))
        #expect(calls == 0)
    }

    @Test func aParkedBorrowIsServedLaterExactlyOnce() throws {
        let h = try Harness()
        var answers: [BorrowResult] = []
        let outcome = try h.loader.borrow(adUnitID: "unit", wait: .seconds(2)) { answers.append($0) }
        #expect(outcome.parked != nil)
        #expect(answers.isEmpty)  // not from inside borrow
        h.source.succeedAll()
        #expect(answers.count == 1)
        guard case .leased(_, reused: false)? = answers.first else { throw TestFailure("not served: \(answers)") }
        h.clock.advance(by: .seconds(3))
        outcome.parked?.cancel()  // harmless after the answer
        #expect(answers.count == 1)
    }

    @Test func aBorrowThatMayNotParkIsRefusedCountedAsAMissAndTopsUp() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 5
            $0.numberOfAdvertisements = 5
        }
        var calls = 0
        let whenServed = { (_: BorrowResult) in calls += 1 }
        let refused = try h.loader.borrow(
            adUnitID: "unit", slot: "s", wait: .seconds(2), mayPark: false, whenServed: whenServed)
        #expect(refused.isParkingRefused)
        #expect(h.stats().borrowMisses == 1)
        #expect(h.stats().parkedBorrows == 0)
        #expect(h.source.requests.map(\.count) == [5])  // the top-up started, as for a zero-wait miss
        // Without a wait there is nothing to refuse: no ad yet.
        #expect(try h.loader.borrow(adUnitID: "unit", mayPark: false, whenServed: whenServed).answer == .noAdYet)
        #expect(h.stats().borrowMisses == 2)
        h.source.succeedAll()
        // A borrow that can be answered now is answered, lent or reused.
        let lent = try h.loader.borrow(
            adUnitID: "unit", slot: "s", wait: .seconds(2), mayPark: false, whenServed: whenServed)
        guard case .leased(let lease, reused: false)? = lent.answer else { throw TestFailure("not lent: \(lent)") }
        let again = try h.loader.borrow(
            adUnitID: "unit", slot: "s", wait: .seconds(2), mayPark: false, whenServed: whenServed)
        guard case .leased(let reused, reused: true)? = again.answer else { throw TestFailure("not reused: \(again)") }
        #expect(reused.id == lease.id)
        #expect(h.stats().borrowHits == 2)
        h.clock.advance(by: .seconds(3))
        #expect(calls == 0)
        #expect(h.stats().borrowMisses == 2)
    }

    @Test func borrowValidatesAdUnitAndLoader() throws {
        let h = try Harness()
        do { _ = try h.borrow("") } catch { #expect(error.field == "ad_unit_id") }
        do { _ = try h.loader.borrow(adUnitID: "u", loader: "x") { _ in } } catch { #expect(error.field == "loader") }
        #expect(h.source.requests.isEmpty)
    }

    // MARK: return

    @Test func returnUnshownPutsTheAdBack() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
        }
        try h.fill()
        let lease = try h.lease()
        #expect(try h.loader.returnLease(lease.id, shown: false) == .backInPool)
        #expect(h.events(.returned).last?.shown == false)
        let again = try h.lease()
        #expect(again.ad.id == lease.ad.id)
        #expect(again.ad.showCount == 0)
    }

    @Test func showsCountTowardTheThresholdThenConsume() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 1
            $0.numberOfAdvertisements = 1
            $0.showCountThreshold = 2
        }
        try h.fill()
        let first = try h.lease()
        #expect(try h.loader.returnLease(first.id, shown: true) == .backInPool)
        let second = try h.lease()
        #expect(second.ad.id == first.ad.id)
        #expect(second.ad.showCount == 1)
        #expect(try h.loader.returnLease(second.id, shown: true) == .consumed)
        #expect(h.events(.removed).last?.reason == .consumed)
        let stats = h.stats()
        #expect(stats.consumed == 1)
        #expect(stats.isBalanced)
        #expect(h.source.pendingAds == 1)  // consumption tops up
    }

    @Test func returningAnAdTooCloseToExpiryCountsItExpired() throws {
        let h = try Harness {
            $0.lifetime = .seconds(100)
            $0.leaseTimeout = .seconds(500)
            $0.minimumRemainingLife = .seconds(10)
        }
        try h.fill()
        let lease = try h.lease()
        h.clock.advance(by: .seconds(95))
        #expect(try h.loader.returnLease(lease.id, shown: false) == .expired)
        #expect(h.stats().isBalanced)
    }

    @Test func unknownOrEndedLeasesAreNotFound() throws {
        let h = try Harness()
        try h.fill()
        let lease = try h.lease()
        try h.loader.returnLease(lease.id, shown: false)
        for id in [lease.id, 0, 12345] {
            do {
                try h.loader.returnLease(id, shown: false)
                Issue.record("lease \(id) found")
            } catch {
                #expect(error.code == .notFound)
                #expect(error.field == "lease_id")
            }
        }
    }

    @Test func anEndedLeaseIDNeverNamesTheLeaseThatReusedItsSlot() throws {
        let h = try Harness()
        try h.fill()
        var ended: [UInt64] = []
        var open = try h.lease()
        for _ in 0..<50 {
            // The next lease takes the slot just freed, under a new id.
            try h.loader.returnLease(open.id, shown: false)
            ended.append(open.id)
            open = try h.lease()
            #expect(!ended.contains(open.id))
            for id in ended {
                #expect(throws: LoaderError.self) { try h.loader.returnLease(id, shown: false) }
            }
        }
        #expect(h.stats().leased == 1)
        #expect(try h.loader.returnLease(open.id, shown: false) == .backInPool)
    }

    // MARK: lease timeout

    @Test func leasesNotReturnedAreReclaimedWithOneWakeup() throws {
        let h = try Harness { $0.leaseTimeout = .seconds(60) }
        try h.fill()
        let a = try h.lease(slot: "a")
        h.clock.advance(by: .seconds(10))
        let b = try h.lease(slot: "b")
        let c = try h.lease()
        // One lease wakeup plus the pool's sweep timer and removal check, however many
        // leases are open.
        #expect(h.clock.pendingCount == 3)
        h.clock.advance(by: .seconds(50))
        var stats = h.stats()
        #expect(stats.leasesReclaimed == 1)
        #expect(h.events(.returned).last?.reason == .reclaimed)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(a.id, shown: false) }
        // The slot is free again: a fresh lease (the reclaimed ad is back in the pool).
        guard case .leased(let fresh, reused: false) = try h.borrow(slot: "a") else { throw TestFailure("no lease") }
        #expect(fresh.id != a.id)
        h.clock.advance(by: .seconds(10))
        stats = h.stats()
        #expect(stats.leasesReclaimed == 3)
        #expect(throws: LoaderError.self) { try h.loader.returnLease(b.id, shown: false) }
        #expect(throws: LoaderError.self) { try h.loader.returnLease(c.id, shown: false) }
        #expect(stats.available == 9 && stats.leased == 1)
        #expect(stats.isBalanced)
    }
}
