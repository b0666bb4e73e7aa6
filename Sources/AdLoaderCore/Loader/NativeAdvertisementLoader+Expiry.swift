extension NativeAdvertisementLoader {
    /// The most expired ads one call removes: one sweep callback, or the purge on a borrow,
    /// prefetch or parked-borrow path.
    ///
    /// Removing an expired ad (heap removal, freeing its record and strings, an `expired`
    /// event, its share of the refill) costs about 1–3 µs, so 500 keep a callback near a
    /// millisecond. Ads loaded together expire together; without a bound, a pool of a million
    /// would stall the loop for over a second once an hour.
    static let expiryBatchLimit = 500

    /// Removes the available ads of `pool` that can no longer be lent (their expiry is less
    /// than the minimum remaining life away, or has passed), soonest first, at most
    /// ``expiryBatchLimit`` of them; when more are due, schedules the sweep to continue at once.
    ///
    /// Expired ads are at the top of the expiry heap, so this costs O(log n) per expired ad
    /// and O(1) when none is due: safe to call on every borrow and prefetch. Callers lend only
    /// when ``hasLendableAd(_:)``: after a capped purge, expired ads may still be on top.
    /// - Returns: the number of ads expired.
    @discardableResult
    func purgeExpired(_ pool: AdPool) -> Int {
        var expired = 0
        // An ad that cannot be lent any more (less than the minimum remaining life left) is
        // as good as expired: it is dropped as expired rather than kept until it is.
        let horizon = pool.expiryHorizon(at: now.unixMilliseconds)
        while true {
            switch pool.expireNext(horizon: horizon, expiredSoFar: expired, limit: Self.expiryBatchLimit) {
            case .done:
                return expired
            case .continueLater:
                scheduleSweep(pool, immediately: true)
                return expired
            case .expired(let ad):
                expired += 1
                reportDropped(ad, from: pool, reason: .expired)
            }
        }
    }

    /// Whether the soonest-expiring available ad may be lent now (it has at least the
    /// minimum remaining life left).
    func hasLendableAd(_ pool: AdPool) -> Bool {
        pool.hasLendableAd(at: now.unixMilliseconds)
    }

    /// Whether an ad expiring at `expiresAt` has at least the pool's minimum remaining life left.
    func isLendable(expiresAt: AdInstant, in pool: AdPool) -> Bool {
        pool.isLendable(expiresAt: expiresAt, at: now.unixMilliseconds)
    }

    /// Keeps a sweep timer running every `sweepInterval` while the pool has available ads;
    /// `immediately` moves it to now, to continue a sweep that hit ``expiryBatchLimit``.
    func scheduleSweep(_ pool: AdPool, immediately: Bool = false) {
        let deadline: AdInstant
        switch pool.sweepWanted(immediately: immediately, isShutDown: isShutDown) {
        case .keep: return
        case .now: deadline = now
        case .afterInterval: deadline = now + pool.configuration.sweepInterval
        }
        pool.sweepScheduled(
            scheduler.schedule(at: deadline) { [weak self, weak reference = pool.reference] in
                guard let self, let pool = reference?.pool else { return }
                self.sweep(pool)
            }, continuation: immediately)
    }

    /// One sweep callback: expire what is due (at most ``expiryBatchLimit``), top up in whole
    /// batches if that left the pool short, and re-arm: at once while more are due, else after
    /// `sweepInterval`. Borrows parked behind a backlog of expired ads are served once the
    /// backlog is gone.
    func sweep(_ pool: AdPool) {
        guard pool.sweepTimerFired(isShutDown: isShutDown) else { return }
        if purgeExpired(pool) > 0 {
            topUp(pool, trigger: .automatic)
        }
        switch pool.sweepPassEnded() {
        case .continuing:
            break
        case .finished:
            serveParked(pool)
            scheduleSweep(pool)
        }
    }
}
