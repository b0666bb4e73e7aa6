extension NativeAdvertisementLoader {
    /// What lending with exclusions gave.
    enum FilteredLend {
        case lent(Lease)
        /// Lendable ads were available, and every one was excluded.
        case held
        /// No lendable ad was available.
        case none
    }

    /// Lends, under `slot`, the soonest-expiring lendable ad that `allows` accepts (given the
    /// ad and its ``CreativeKey``), like ``lend(from:slot:)`` for a fresh lease; never one it
    /// refuses. Scans the pool's available ads: O(available).
    func lend(from pool: AdPool, slot: String, where allows: (Ad, CreativeKey) -> Bool) -> FilteredLend {
        var best: (handle: AdHandle, deadline: Int64, sequence: UInt64)?
        var excluded = false
        let limit = now.unixMilliseconds &+ pool.minimumLifeMilliseconds
        for entry in pool.available.unorderedEntries where entry.deadline > limit {
            if let current = best, (current.deadline, current.sequence) < (entry.deadline, entry.sequence) { continue }
            let ad = pool[entry.handle].ad
            guard allows(ad, CreativeKey(ad)) else {
                excluded = true
                continue
            }
            best = (entry.handle, entry.deadline, entry.sequence)
        }
        guard let adHandle = best?.handle else { return excluded ? .held : .none }
        let ad = pool[adHandle].ad
        let expiresAt = leaseExpiry(of: ad, in: pool)
        let leaseHandle = leases.insert(
            LeaseTable.Record(id: 0, pool: pool, adHandle: adHandle, slot: slot, expiresAt: expiresAt), ids: ids)
        let leaseID = leases[leaseHandle].id
        pool.lease(adHandle, to: leaseHandle)
        pool.slots[slot] = leaseHandle
        pool.stats.borrowHits += 1
        scheduleLeaseTimer()
        emit(.leased, pool) {
            $0.adID = ad.id
            $0.leaseID = leaseID
            $0.slot = slot
        }
        return .lent(Lease(id: leaseID, slot: slot, expiresAt: expiresAt, ad: ad))
    }
}
