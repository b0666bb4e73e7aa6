extension NativeAdvertisementLoader {
    /// Lends an ad for `slot` if one can be lent now: the slot's own lease when it holds a
    /// valid one, else the soonest-expiring valid available ad. Counts the hit.
    ///
    /// A slot's own lease is renewed: its timeout moves to `leaseTimeout` from now, bounded
    /// by the ad's expiry. A slot whose leased ad has less than the minimum remaining life
    /// left (or was dropped) loses that lease first, and the ad is dropped as expired.
    ///
    /// With an `exclusion`, a fresh lease takes the soonest-expiring lendable ad it lets
    /// through (nil when none does); a slot's own lease is kept whatever the exclusion says
    /// (a cell that scrolls back shows the same ad).
    func lend(from pool: AdPool, slot: String?, excluding exclusion: AdExclusion? = nil) -> BorrowResult? {
        if let slot, let leaseHandle = pool.slots[slot] {
            let lease = leases[leaseHandle]
            let record = pool[lease.adHandle]
            switch record.state {
            case .leased where isLendable(expiresAt: record.ad.expiresAt, in: pool):
                pool.countHit()
                let expiresAt = leaseExpiry(of: record.ad, in: pool)
                if expiresAt != lease.expiresAt {
                    leases.renew(leaseHandle, expiresAt: expiresAt)
                    scheduleLeaseTimer()
                }
                return .leased(Lease(id: lease.id, slot: slot, expiresAt: expiresAt, ad: record.ad), reused: true)
            case .leasedPendingDrop(_, let reason):
                endLease(leaseHandle, .adDropped(reason))
            case .leased, .available:
                endLease(leaseHandle, .adDropped(.expired))
            }
        }
        purgeExpired(pool)
        guard hasLendableAd(pool), var (adHandle, _) = pool.soonestAvailable else { return nil }
        if let exclusion {
            let limit = now.unixMilliseconds &+ pool.minimumLifeMilliseconds
            guard let passing = pool.soonestAvailable(after: limit, passing: exclusion) else { return nil }
            adHandle = passing
        }
        let expiresAt = leaseExpiry(of: pool[adHandle].ad, in: pool)
        let leaseHandle = leases.insert(
            LeaseTable.Record(id: 0, pool: pool, adHandle: adHandle, slot: slot, expiresAt: expiresAt), ids: ids)
        let leaseID = leases[leaseHandle].id
        pool.lend(adHandle, to: leaseHandle, slot: slot)
        scheduleLeaseTimer()
        let ad = pool[adHandle].ad
        emit(.leased, pool) {
            $0.adID = ad.id
            $0.leaseID = leaseID
            $0.slot = slot
            $0.expiresAt = expiresAt
        }
        return .leased(Lease(id: leaseID, slot: slot, expiresAt: expiresAt, ad: ad), reused: false)
    }

    /// When a lease lent now ends: `leaseTimeout` from now, or the ad's expiry if sooner (a
    /// lease never outlives its ad).
    func leaseExpiry(of ad: Ad, in pool: AdPool) -> AdInstant {
        let timeout = now.unixMilliseconds &+ pool.leaseTimeoutMilliseconds
        return AdInstant(unixMilliseconds: min(timeout, ad.expiresAt.unixMilliseconds))
    }

    /// Ends a lease and settles its ad: back in the pool, or dropped (consumed, expired, or
    /// removed for the reason it was marked with while leased).
    ///
    /// `note` is the client's reason for an `.invalidated` end, carried by the `removed` event.
    /// Emits `returned` (with a reason when the loader ended the lease itself), tells the
    /// source of a show, and reports a dropped ad (its event, the source's notice). After a
    /// client's return or a reclaim, serves parked borrows with the ad or tops the pool up;
    /// the loader's own lease ends (`.adDropped`: a slot borrowed again, a shutdown) leave
    /// that to their caller.
    @discardableResult
    func endLease(
        _ leaseHandle: LeaseHandle, _ end: LeaseEnd, note: String? = nil, device: ImpressionDevice = ImpressionDevice()
    ) -> ReturnOutcome {
        let lease = leases.remove(leaseHandle)
        // An app-open lease releases its reservation however it ends (a shown Return that
        // counted the show released it already).
        lease.appOpen?.leaseEnded()
        switch end {
        case .returned, .invalidated: leases.noteEnded(lease.id, .returned)
        case .reclaimed: leases.noteEnded(lease.id, .reclaimed)
        case .adDropped: leases.noteEnded(lease.id, .dropped)
        }
        let pool = lease.pool
        let shown = end.shown
        // Settle the ad first so that observers of these events see consistent stats.
        let settled = pool.leaseEnded(
            lease.adHandle, lease: leaseHandle, slot: lease.slot, shown: shown, at: now.unixMilliseconds)
        let drop = settled.drop
        if drop == nil { scheduleSweep(pool) }
        emit(.returned, pool) {
            $0.adID = settled.ad.id
            $0.leaseID = lease.id
            $0.slot = lease.slot
            $0.shown = shown
            $0.reason = end.eventReason
        }
        if shown { pool.source.adShown(settled.ad, device: device) }
        if let drop { reportDropped(settled.ad, from: pool, reason: drop, note: end.invalidates ? note : nil) }
        switch end {
        case .returned, .invalidated, .reclaimed:
            if drop == nil {
                serveParked(pool)
            } else {
                topUp(pool, trigger: .automatic)
            }
        case .adDropped:
            break
        }
        guard let drop else { return .backInPool }
        switch drop {
        case .consumed: return .consumed
        case .expired: return .expired
        case .invalidated where end.invalidates: return .invalidated
        case .disabled, .shutdown, .invalidated, .reconfigured, .memoryBudget: return .removed
        }
    }

    /// Parks a borrow until an ad can be lent or `wait` passes.
    func park(
        in pool: AdPool, slot: String?, exclusion: AdExclusion? = nil, wait: Duration,
        whenServed: @escaping (BorrowResult) -> Void
    ) -> ParkedBorrowHandle {
        let handle = ParkedBorrowHandle(slot: slot, exclusion: exclusion, whenServed: whenServed) {
            [weak reference = pool.reference] _ in
            reference?.pool.parkedBorrowWithdrawn()
        }
        pool.park(handle)
        handle.timer = scheduler.schedule(at: now + wait) { [weak reference = pool.reference, weak handle] in
            guard let pool = reference?.pool, let handle, let whenServed = handle.take() else { return }
            pool.parkedBorrowTimedOut()
            whenServed(.noAdYet)
        }
        return handle
    }

    /// Lends to parked borrows, oldest first, while ads can be lent.
    func serveParked(_ pool: AdPool) {
        while let first = pool.parkedBorrowToServe() {
            purgeExpired(pool)
            guard
                pool.takeParkedBorrowIfServable(
                    slotHoldsValidLease: slotHoldsValidLease(pool, first.slot), at: now.unixMilliseconds)
            else { return }
            guard let whenServed = first.take() else { continue }
            guard let result = lend(from: pool, slot: first.slot, excluding: first.exclusion) else {
                // The slot's lease had expired and nothing else is available, or nothing
                // available passes the borrow's exclusion.
                pool.countMiss()
                whenServed(.noAdYet)
                continue
            }
            whenServed(result)
        }
    }

    /// Whether `slot` holds a lease whose ad may still be lent to it (at least the minimum
    /// remaining life left).
    func slotHoldsValidLease(_ pool: AdPool, _ slot: String?) -> Bool {
        guard let slot, let leaseHandle = pool.slots[slot] else { return false }
        let record = pool[leases[leaseHandle].adHandle]
        return record.state == .leased(leaseHandle) && isLendable(expiresAt: record.ad.expiresAt, in: pool)
    }

    /// Keeps one scheduler wakeup at the earliest lease timeout.
    func scheduleLeaseTimer() {
        guard !isShutDown, let deadline = leases.nextDeadline else { return }
        if let current = leaseTimerDeadline, current <= deadline, leaseTimer != nil { return }
        leaseTimer?.cancel()
        leaseTimerDeadline = deadline
        leaseTimer = scheduler.schedule(at: deadline) { [weak self] in
            self?.leaseTimerFired()
        }
    }

    private func leaseTimerFired() {
        leaseTimer = nil
        leaseTimerDeadline = nil
        while let handle = leases.firstDue(at: now) {
            leases[handle].pool.countReclaim()
            endLease(handle, .reclaimed)
        }
        scheduleLeaseTimer()
    }
}
