import Testing

@testable import AdLoaderCore

/// The pool's decisions on their own: each event in, the action the loader carries out out
/// (no loader, scheduler or source involved).
struct AdPoolEventTests {
    final class Silent: DemandSource {
        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
        ) {}
    }

    final class FakeTask: ScheduledTask {
        var cancelled = false
        func cancel() { cancelled = true }
    }

    /// A fixed pool of `maximum` (batch 5) created at 0, with ads expiring at `expiries` (ms);
    /// an ad is lendable while more than 50 ms of its life is left.
    static func pool(
        maximum: Int = 10, expiries: [Int64] = [], configure: (inout LoaderConfiguration) -> Void = { _ in }
    ) -> AdPool {
        var configuration = LoaderConfiguration()
        configuration.numberOfAdvertisements = 5
        configuration.maximumRetainedAdvertisements = maximum
        configuration.sizing = .fixed
        configuration.minimumRemainingLife = .milliseconds(50)
        configure(&configuration)
        let pool = AdPool(
            loader: "default", adUnitID: "unit", configuration: configuration, source: Silent(),
            now: AdInstant(unixMilliseconds: 0))
        for (index, expiry) in expiries.enumerated() {
            let ad = Ad(
                id: "ad-\(index)", adUnitID: "unit", loader: "default",
                creative: .native(NativeAdContent(headline: "\(index)")),
                loadedAt: AdInstant(unixMilliseconds: 0), expiresAt: AdInstant(unixMilliseconds: expiry))
            pool.insertAvailable(ad, sequence: UInt64(index))
        }
        return pool
    }

    static func at(_ milliseconds: Int64) -> AdInstant { AdInstant(unixMilliseconds: milliseconds) }

    static func parkedBorrow(slot: String? = nil) -> ParkedBorrowHandle {
        ParkedBorrowHandle(slot: slot, whenServed: { _ in }, onWithdraw: { _ in })
    }

    static let retryable = UpstreamError(code: .retryable, message: "503")
    static let unreachable = UpstreamError(code: .unreachable, message: "down")

    // MARK: Top-up and fill

    @Test func aPoolThatDoesNotLoadSendsNothing() {
        let pool = Self.pool()
        #expect(pool.topUpRequested(.explicit, amount: .complete, at: Self.at(0), isShutDown: true) == .none)
        guard case .wants = pool.topUpRequested(.explicit, amount: .complete, at: Self.at(0), isShutDown: false)
        else {
            Issue.record("an empty enabled pool wants nothing")
            return
        }
        pool.setEnabled(false)
        #expect(pool.topUpRequested(.explicit, amount: .complete, at: Self.at(0), isShutDown: false) == .none)
        #expect(!pool.fillAnswered(asked: 5, accepted: 5, latencyMilliseconds: 10, isShutDown: false))
        #expect(pool.failureSettled(Self.retryable, probe: false, at: Self.at(0), isShutDown: false) == nil)
        // A failure on a pool that no longer loads leaves no backoff behind.
        #expect(pool.notBefore == 0)
    }

    @Test func aProbeGoesOnlyWhenThePoolWantsAdsAndNothingHoldsIt() {
        let empty = Self.pool()
        #expect(empty.probeDue(at: Self.at(1_000), memoryRoom: 10) == .send)
        #expect(empty.probeDue(at: Self.at(1_000), memoryRoom: 0) == .later)
        // Full: nothing to ask for.
        let full = Self.pool(maximum: 2, expiries: [100_000, 100_000])
        #expect(full.probeDue(at: Self.at(1_000), memoryRoom: 10) == .later)
        // Idle: no automatic traffic.
        #expect(empty.probeDue(at: Self.at(600_000), memoryRoom: 10) == .later)
        // A Retry-After holds probes back until it ends.
        let held = Self.pool()
        let error = UpstreamError(code: .unreachable, message: "down", retryAfter: .seconds(40))
        #expect(held.failureSettled(error, probe: false, at: Self.at(0), isShutDown: false) == .scheduleProbe)
        #expect(held.probeDue(at: Self.at(39_999), memoryRoom: 10) == .later)
        #expect(held.probeDue(at: Self.at(40_000), memoryRoom: 10) == .send)
        // At its request limit: the answers in flight tell as much.
        let busy = Self.pool { $0.maximumConcurrentRequests = 1 }
        busy.requestSent(count: 1)
        #expect(busy.probeDue(at: Self.at(1_000), memoryRoom: 10) == .later)
    }

    @Test func theProbeTimerProbesOnlyWhileUnreachableAndLoading() {
        let pool = Self.pool()
        #expect(
            pool.failureSettled(Self.unreachable, probe: false, at: Self.at(0), isShutDown: false) == .scheduleProbe)
        #expect(pool.probeTimerFired(isShutDown: false) == .probe)
        #expect(pool.probeTimerFired(isShutDown: true) == .none)
        pool.setEnabled(false)
        #expect(pool.probeTimerFired(isShutDown: false) == .none)
    }

    @Test func theRetryTimerWaitsOutALongerBackoffThenTopsUp() {
        let pool = Self.pool()
        #expect(
            pool.failureSettled(Self.retryable, probe: false, at: Self.at(0), isShutDown: false)
                == .scheduleRetry(attempt: 0))
        #expect(pool.backOff(until: 5_000) == Self.at(5_000))
        // A Retry-After meanwhile pushed the backoff's end later: the timer waits on.
        let later = UpstreamError(code: .retryable, message: "429", retryAfter: .seconds(8))
        #expect(
            pool.failureSettled(later, probe: false, at: Self.at(1_000), isShutDown: false)
                == AdPool.FillStateMachine.Action.none)
        #expect(pool.retryTimerFired(at: Self.at(5_000), isShutDown: false) == .waitUntil(Self.at(9_000)))
        #expect(pool.fill.state == .backingOff)
        #expect(pool.retryTimerFired(at: Self.at(9_000), isShutDown: false) == .fill(.topUp))
        #expect(pool.fill.state == .ready)
    }

    @Test func aRetryDueOnAPoolThatNoLongerLoadsDoesNothingButSettlesTheFillState() {
        let pool = Self.pool()
        _ = pool.failureSettled(Self.retryable, probe: false, at: Self.at(0), isShutDown: false)
        pool.backOff(until: 5_000)
        #expect(pool.retryTimerFired(at: Self.at(5_000), isShutDown: true) == .fill(.none))
        #expect(pool.fill.state == .ready)
        #expect(pool.fill.retries == 1)
    }

    @Test func anAnswerEndsTheBackoffAndResumesAnUnreachablePool() {
        let pool = Self.pool()
        _ = pool.failureSettled(Self.unreachable, probe: false, at: Self.at(0), isShutDown: false)
        #expect(pool.notBefore == 5_000)
        #expect(pool.fillAnswered(asked: 1, accepted: 1, latencyMilliseconds: 10, isShutDown: false))
        #expect(pool.notBefore == 0)
        #expect(pool.fillSucceeded(isShutDown: false) == .resume)
        // Told after a parked borrow's callback disabled the loader: the state settles, no action.
        _ = pool.failureSettled(Self.unreachable, probe: false, at: Self.at(0), isShutDown: false)
        pool.setEnabled(false)
        #expect(pool.fillSucceeded(isShutDown: false) == .none)
        #expect(pool.fill.state == .ready)
    }

    @Test func anAnswerFollowsUpWhatTheCapHeldBackOrAShortAnswerWithBorrowsWaiting() {
        let pool = Self.pool(maximum: 20) { $0.maximumConcurrentRequests = 1 }
        // Four batches missing, one request allowed: the cap holds three back.
        let start = pool.topUpRequested(.automatic, amount: .wholeBatches, at: Self.at(0), isShutDown: false)
        guard case .wants(let plan, let wanted, _) = start else {
            Issue.record("an empty pool wants nothing")
            return
        }
        _ = pool.topUpFitted(plan, amount: .wholeBatches, wanted: wanted, room: 100)
        #expect(pool.heldBackByCap)
        pool.requestSent(count: 5)
        pool.requestAnswered(asked: 5)
        #expect(pool.followUpAfterAnswer(asked: 5, accepted: 5, at: Self.at(10)) == .automatic)
        // An empty answer is not re-asked at once.
        #expect(pool.followUpAfterAnswer(asked: 5, accepted: 0, at: Self.at(10)) == nil)

        let parked = Self.pool()
        #expect(parked.followUpAfterAnswer(asked: 5, accepted: 2, at: Self.at(10)) == nil)
        parked.park(Self.parkedBorrow())
        // A borrow waits on screen: the follow-up is explicit.
        #expect(parked.followUpAfterAnswer(asked: 5, accepted: 2, at: Self.at(10)) == .explicit)
        #expect(parked.followUpAfterAnswer(asked: 5, accepted: 5, at: Self.at(10)) == nil)
    }

    // MARK: Arrival

    @Test func anArrivingAdIsDroppedForTheFirstReasonThatApplies() {
        let pool = Self.pool()
        var asked = 0
        func invalid(_ answer: Bool) -> Bool {
            asked += 1
            return answer
        }
        let fresh = Self.at(10_000)
        #expect(pool.arrivalDrop(expiresAt: fresh, at: 0, isShutDown: false, invalid: invalid(false)) == nil)
        #expect(pool.arrivalDrop(expiresAt: fresh, at: 0, isShutDown: false, invalid: invalid(true)) == .invalidated)
        #expect(pool.arrivalDrop(expiresAt: Self.at(50), at: 0, isShutDown: false, invalid: invalid(false)) == .expired)
        #expect(pool.stats.expiredOnArrival == 1)
        #expect(pool.arrivalDrop(expiresAt: fresh, at: 0, isShutDown: true, invalid: invalid(true)) == .shutdown)
        pool.setEnabled(false)
        #expect(pool.arrivalDrop(expiresAt: fresh, at: 0, isShutDown: false, invalid: invalid(true)) == .disabled)
        pool.retire()
        #expect(pool.arrivalDrop(expiresAt: fresh, at: 0, isShutDown: false, invalid: invalid(true)) == .reconfigured)
        // The creative is checked only for a pool that still loads.
        #expect(asked == 3)
    }

    // MARK: Expiry and sweep

    @Test func expiryDropsWhatCannotBeLentUpToTheLimitThenContinuesLater() {
        let pool = Self.pool(expiries: [100, 120, 151, 5_000])
        let horizon = pool.expiryHorizon(at: 100)
        #expect(horizon == 150)
        #expect(pool.hasLendableAd(at: 100) == false)
        guard case .expired(let first) = pool.expireNext(horizon: horizon, expiredSoFar: 0, limit: 1) else {
            Issue.record("the ad expiring at 100 is not dropped")
            return
        }
        #expect(first.id == "ad-0")
        #expect(pool.stats.expired == 1)
        guard case .continueLater = pool.expireNext(horizon: horizon, expiredSoFar: 1, limit: 1) else {
            Issue.record("the purge does not stop at its limit")
            return
        }
        #expect(pool.available.count == 3)
        guard case .expired(let second) = pool.expireNext(horizon: horizon, expiredSoFar: 0, limit: 1) else {
            Issue.record("the ad expiring at 120 is not dropped")
            return
        }
        #expect(second.id == "ad-1")
        guard case .done = pool.expireNext(horizon: horizon, expiredSoFar: 1, limit: 1) else {
            Issue.record("an ad with more than the minimum life left is dropped")
            return
        }
        #expect(pool.hasLendableAd(at: 100))
        #expect(!pool.hasLendableAd(at: 101))
    }

    @Test func aSweepIsScheduledOncePerPoolAndMovedToNowOnlyToContinue() {
        let empty = Self.pool()
        #expect(empty.sweepWanted(immediately: false, isShutDown: false) == .keep)
        let pool = Self.pool(expiries: [5_000])
        #expect(pool.sweepWanted(immediately: false, isShutDown: true) == .keep)
        #expect(pool.sweepWanted(immediately: false, isShutDown: false) == .afterInterval)
        #expect(pool.sweepWanted(immediately: true, isShutDown: false) == .now)
        let pending = FakeTask()
        pool.sweepScheduled(pending, continuation: false)
        #expect(pool.sweepWanted(immediately: false, isShutDown: false) == .keep)
        #expect(pool.sweepWanted(immediately: true, isShutDown: false) == .now)
        pool.sweepScheduled(FakeTask(), continuation: true)
        #expect(pending.cancelled)
        #expect(pool.sweepWanted(immediately: true, isShutDown: false) == .keep)
        // Fired: the continuation runs, then (no timer left) serves and re-arms.
        #expect(pool.sweepTimerFired(isShutDown: false))
        #expect(pool.sweepPassEnded() == .finished)
        pool.sweepScheduled(FakeTask(), continuation: true)
        #expect(pool.sweepPassEnded() == .continuing)
        pool.setEnabled(false)
        #expect(!pool.sweepTimerFired(isShutDown: false))
        #expect(pool.sweepWanted(immediately: true, isShutDown: false) == .keep)
    }

    // MARK: Parked borrows

    @Test func aParkedBorrowIsServedOnlyWhenSomethingCanBeLentToIt() {
        let pool = Self.pool(expiries: [100])
        let first = Self.parkedBorrow(slot: "a")
        pool.park(first)
        pool.park(Self.parkedBorrow())
        #expect(pool.parkedBorrowToServe() === first)
        // The only ad has less than the minimum life left at 60.
        #expect(!pool.takeParkedBorrowIfServable(slotHoldsValidLease: false, at: 60))
        #expect(pool.parked.count == 2)
        // The slot's own lease can serve it.
        #expect(pool.takeParkedBorrowIfServable(slotHoldsValidLease: true, at: 60))
        #expect(pool.parked.count == 1)
        #expect(pool.parkedBorrowToServe() !== first)
        #expect(pool.takeParkedBorrowIfServable(slotHoldsValidLease: false, at: 0))
        #expect(pool.parkedBorrowToServe() == nil)
        pool.park(Self.parkedBorrow())
        pool.setEnabled(false)
        #expect(pool.parkedBorrowToServe() == nil)
    }

    @Test func parkedBorrowsFailOnlyWhenNothingCanCome() {
        let pool = Self.pool(expiries: [100])
        _ = pool.failureSettled(Self.unreachable, probe: false, at: Self.at(0), isShutDown: false)
        pool.fillFailed(Self.unreachable)
        // Nothing parked.
        #expect(pool.parkedBorrowsFailing(at: 60) == nil)
        pool.park(Self.parkedBorrow())
        // An ad can still be lent.
        #expect(pool.parkedBorrowsFailing(at: 0) == nil)
        #expect(pool.parkedBorrowsFailing(at: 60) == Self.unreachable)
        // A request in flight may still bring one.
        pool.requestSent(count: 1)
        #expect(pool.parkedBorrowsFailing(at: 60) == nil)
        // A retryable failure keeps borrows waiting for the retry.
        let retrying = Self.pool()
        _ = retrying.failureSettled(Self.retryable, probe: false, at: Self.at(0), isShutDown: false)
        retrying.fillFailed(Self.retryable)
        retrying.park(Self.parkedBorrow())
        #expect(retrying.parkedBorrowsFailing(at: 0) == nil)
    }

    // MARK: Removal

    @Test func aPoolIsRemovedOnceIdleLongEnoughEmptyAndNotBackingOff() {
        // poolRemovalTimeout 3,600 s, sweepInterval 60 s; the last demand at 0.
        let timeout: Int64 = 3_600_000
        #expect(Self.pool().removalCheckDeadline(notBefore: nil) == Self.at(timeout))
        #expect(Self.pool().removalCheckDeadline(notBefore: Self.at(10)) == Self.at(timeout))
        #expect(Self.pool().removalCheckDeadline(notBefore: Self.at(timeout + 1)) == Self.at(timeout + 1))
        let pool = Self.pool(expiries: [10_000_000])
        #expect(pool.removalCheck(at: Self.at(1_000)) == .checkAgain(Self.at(timeout)))
        #expect(pool.removalCheck(at: Self.at(timeout)) == .checkAgain(Self.at(timeout + 60_000)))
        let empty = Self.pool()
        #expect(empty.removalCheck(at: Self.at(timeout)) == .remove)
        let error = UpstreamError(code: .retryable, message: "429", retryAfter: .seconds(120))
        _ = empty.failureSettled(error, probe: false, at: Self.at(timeout), isShutDown: false)
        #expect(empty.removalCheck(at: Self.at(timeout)) == .checkAgain(Self.at(timeout + 120_000)))
        #expect(empty.removalCheck(at: Self.at(timeout + 120_000)) == .remove)
    }

    // MARK: Budget queue and memory eviction

    @Test func aBudgetTurnTopsUpOnlyAPoolStillLoadingWithDemand() {
        let pool = Self.pool()
        #expect(pool.budgetTurnCame(at: Self.at(0)) == nil)
        let wait = AdPool.BudgetWait(trigger: .explicit, amount: .wholeBatches)
        #expect(pool.waitForBudget(wait))
        #expect(pool.budgetTurnCame(at: Self.at(0)) == wait)
        #expect(pool.budgetWait == nil)
        // Gone idle meanwhile: the wait is dropped, nothing is sent.
        #expect(pool.waitForBudget(wait))
        #expect(pool.budgetTurnCame(at: Self.at(600_000)) == nil)
        #expect(pool.budgetWait == nil)
        #expect(pool.waitForBudget(wait))
        pool.setEnabled(false)
        #expect(pool.budgetTurnCame(at: Self.at(0)) == nil)
        #expect(pool.budgetWait == nil)
    }

    @Test func evictionTakesIdlePoolsFirstAndStockedOnesDownToTheirTarget() {
        let stocked = Self.pool(maximum: 10, expiries: [60, 2_000])
        #expect(stocked.evictionRank(at: Self.at(0)) == .none)
        #expect(stocked.evictionRank(at: Self.at(600_000)) == .idle)
        #expect(Self.pool().evictionRank(at: Self.at(600_000)) == .none)
        let beyond = Self.pool(maximum: 1, expiries: [60, 2_000])
        #expect(beyond.evictionRank(at: Self.at(0)) == .stocked)
        #expect(beyond.evictionCandidate(keepingTarget: true)?.deadline == 60)
        #expect(stocked.evictionCandidate(keepingTarget: true) == nil)
        #expect(stocked.evictionCandidate(keepingTarget: false)?.deadline == 60)
        // The soonest ad has less than the minimum life left at 10: dropped as expired.
        let (expired, reason) = beyond.evictSoonest(at: 10)
        #expect(expired.id == "ad-0")
        #expect(reason == .expired)
        #expect(beyond.evictionCandidate(keepingTarget: true) == nil)
        let (kept, memory) = beyond.evictSoonest(at: 10)
        #expect(kept.id == "ad-1")
        #expect(memory == .memoryBudget)
        #expect(beyond.stats.droppedForMemory == 1)
        #expect(beyond.stats.expired == 1)
        beyond.setEnabled(false)
        #expect(stocked.evictionRank(at: Self.at(600_000)) == .idle)
        stocked.setEnabled(false)
        #expect(stocked.evictionRank(at: Self.at(600_000)) == .none)
    }

    @Test func statsSayWhetherThePoolIsIdle() {
        let pool = Self.pool(expiries: [5_000])
        #expect(!pool.currentStats(at: Self.at(599_999)).idle)
        #expect(pool.currentStats(at: Self.at(600_000)).idle)
        #expect(pool.currentStats(at: Self.at(0)).available == 1)
    }
}
