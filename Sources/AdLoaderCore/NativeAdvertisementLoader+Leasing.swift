extension NativeAdvertisementLoader {
    /// Lends an ad for `slot` if one can be lent now: the slot's own lease when it holds a
    /// valid one, else the soonest-expiring valid available ad. Counts the hit.
    ///
    /// A slot whose leased ad expired (or was dropped) loses that lease first.
    func lend(from pool: AdPool, slot: String?) -> BorrowResult? {
        if let slot, let leaseHandle = pool.slots[slot] {
            let lease = leases[leaseHandle]
            let record = pool[lease.adHandle]
            if record.dropReason == nil && now < record.ad.expiresAt {
                pool.stats.borrowHits += 1
                return .leased(Lease(id: lease.id, slot: slot, expiresAt: lease.expiresAt, ad: record.ad), reused: true)
            }
            endLease(leaseHandle, shown: false, reason: record.dropReason ?? "expired")
        }
        purgeExpired(pool)
        guard hasLendableAd(pool), let (adHandle, _) = pool.soonestAvailable else { return nil }
        let leaseID = ids.nextLeaseID()
        let expiresAt = now + pool.configuration.leaseTimeout
        let leaseHandle = leases.insert(
            LeaseTable.Record(id: leaseID, pool: pool, adHandle: adHandle, slot: slot, expiresAt: expiresAt))
        pool.lease(adHandle, leaseHandle: leaseHandle)
        if let slot { pool.slots[slot] = leaseHandle }
        pool.stats.borrowHits += 1
        scheduleLeaseTimer()
        let ad = pool[adHandle].ad
        emit(.leased, pool) {
            $0.adID = ad.id
            $0.leaseID = leaseID
            $0.slot = slot
        }
        return .leased(Lease(id: leaseID, slot: slot, expiresAt: expiresAt, ad: ad), reused: false)
    }

    /// Ends a lease and settles its ad: back in the pool, consumed, expired or removed.
    ///
    /// Emits `returned` (with `reason` for lease ends the caller did not ask for:
    /// "reclaimed", "expired", "disabled", "shutdown") and then the ad's own event.
    @discardableResult
    func endLease(_ leaseHandle: Int, shown: Bool, reason: String?) -> ReturnOutcome {
        let lease = leases.remove(leaseHandle)
        let pool = lease.pool
        if let slot = lease.slot, pool.slots[slot] == leaseHandle { pool.slots[slot] = nil }
        pool.unlease(lease.adHandle)
        if shown { pool[lease.adHandle].ad.showCount += 1 }
        let record = pool[lease.adHandle]
        // Settle the ad first so that observers of these events see consistent stats.
        let outcome: ReturnOutcome
        let fate: (kind: AdEvent.Kind, reason: String?)?
        if let dropReason = record.dropReason {
            pool.discard(lease.adHandle)
            pool.stats.removed += 1
            (outcome, fate) = (.removed, (.removed, dropReason))
        } else if shown && record.ad.showCount >= pool.configuration.showCountThreshold {
            pool.discard(lease.adHandle)
            pool.stats.consumed += 1
            (outcome, fate) = (.consumed, (.removed, "consumed"))
        } else if now >= record.ad.expiresAt {
            pool.discard(lease.adHandle)
            pool.stats.expired += 1
            (outcome, fate) = (.expired, (.expired, nil))
        } else {
            pool.makeAvailable(lease.adHandle)
            scheduleSweep(pool)
            (outcome, fate) = (.backInPool, nil)
        }
        emit(.returned, pool) {
            $0.adID = record.ad.id
            $0.leaseID = lease.id
            $0.slot = lease.slot
            $0.shown = shown
            $0.reason = reason
        }
        if let fate {
            emit(fate.kind, pool) {
                $0.adID = record.ad.id
                $0.reason = fate.reason
            }
        }
        // The loader's own lease ends (slot re-borrow, drain) settle the pool themselves.
        guard reason == nil || reason == "reclaimed" else { return outcome }
        if outcome == .backInPool {
            serveParked(pool)
        } else {
            topUp(pool, trigger: .automatic)
        }
        return outcome
    }

    /// Marks every leased ad of `pool` for removal when its lease ends.
    func markLeasedAds(of pool: AdPool, reason: String) {
        for leaseHandle in leases.allHandles where leases[leaseHandle].pool === pool {
            pool[leases[leaseHandle].adHandle].dropReason = reason
        }
    }

    /// Parks a borrow until an ad can be lent or `wait` passes.
    func park(
        in pool: AdPool, slot: String?, wait: Duration, whenServed: @escaping (BorrowResult) -> Void
    ) -> ParkedBorrowHandle {
        let handle = ParkedBorrowHandle(slot: slot, whenServed: whenServed) { [weak pool] _ in
            pool?.parked.noteWithdrawn()
        }
        pool.parked.append(handle)
        handle.timer = scheduler.schedule(at: now + wait) { [weak pool, weak handle] in
            guard let pool, let handle, let whenServed = handle.take() else { return }
            pool.parked.noteWithdrawn()
            pool.stats.borrowMisses += 1
            whenServed(.noAdYet)
        }
        return handle
    }

    /// Lends to parked borrows, oldest first, while ads can be lent.
    func serveParked(_ pool: AdPool) {
        while pool.enabled, let first = pool.parked.first() {
            purgeExpired(pool)
            guard slotHoldsValidLease(pool, first.slot) || hasLendableAd(pool) else { return }
            _ = pool.parked.removeFirst()
            guard let whenServed = first.take() else { continue }
            guard let result = lend(from: pool, slot: first.slot) else {
                // The slot's lease had expired and nothing else is available.
                pool.stats.borrowMisses += 1
                whenServed(.noAdYet)
                continue
            }
            whenServed(result)
        }
    }

    /// Whether `slot` holds a lease whose ad may still be shown.
    func slotHoldsValidLease(_ pool: AdPool, _ slot: String?) -> Bool {
        guard let slot, let leaseHandle = pool.slots[slot] else { return false }
        let record = pool[leases[leaseHandle].adHandle]
        return record.dropReason == nil && now < record.ad.expiresAt
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
            leases[handle].pool.stats.leasesReclaimed += 1
            endLease(handle, shown: false, reason: "reclaimed")
        }
        scheduleLeaseTimer()
    }
}
