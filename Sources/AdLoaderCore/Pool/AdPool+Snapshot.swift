extension AdPool {
    /// What the pool holds now as a value (see ``PoolSnapshot``): its available ads in lending
    /// order, its open leases (read from `leases`, the loader's table) by id, `blocks` (its
    /// loader's creative blocks, if any) and its demand estimate; `ordered` false: ads and leases
    /// in no particular order.
    func snapshot(leases: LeaseTable, blocks: CreativeBlockList?, at now: AdInstant, ordered: Bool = true)
        -> PoolSnapshot
    {
        var available: [(sequence: UInt64, pooled: PoolSnapshot.PooledAd)] = []
        var leased: [PoolSnapshot.LeasedAd] = []
        available.reserveCapacity(self.available.count)
        forEachRecord { _, record in
            let pooled = PoolSnapshot.PooledAd(ad: record.ad, sourceState: record.ad.sourceContext?.snapshotState)
            switch record.state {
            case .available:
                available.append((record.sequence, pooled))
            case .leased(let handle), .leasedPendingDrop(let handle, _):
                let lease = leases[handle]
                var pendingDrop: AdDropReason?
                if case .leasedPendingDrop(_, let reason) = record.state { pendingDrop = reason }
                leased.append(
                    PoolSnapshot.LeasedAd(
                        leaseID: lease.id, slot: lease.slot, expiresAt: lease.expiresAt, pooled: pooled,
                        pendingDrop: pendingDrop))
            }
        }
        if ordered {
            // The heap's order: soonest expiry first, the ad loaded first on a tie.
            available.sort {
                ($0.pooled.ad.expiresAt.unixMilliseconds, $0.sequence) < (
                    $1.pooled.ad.expiresAt.unixMilliseconds, $1.sequence
                )
            }
            leased.sort { $0.leaseID < $1.leaseID }
        }
        let nowMilliseconds = now.unixMilliseconds
        var snapshot = PoolSnapshot(
            loader: loader, adUnitID: adUnitID, format: configuration.format, takenAt: now,
            ads: available.map(\.pooled), leases: leased,
            blockedCreatives: (blocks?.activeBlocks(at: nowMilliseconds) ?? [:]).mapValues {
                AdInstant(unixMilliseconds: $0)
            },
            demand: demand.snapshot, prefetchWanted: prefetchWanted)
        snapshot.consentClass = key.consentClass
        return snapshot
    }
}
