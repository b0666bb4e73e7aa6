/// Pools as values: taking a ``PoolSnapshot`` of every pool, and restoring pools from them.
extension NativeAdvertisementLoader {
    /// What every pool of every configured loader holds now, sorted by loader then ad unit:
    /// available ads, open leases, the loader's creative blocks and the demand estimate (see
    /// ``PoolSnapshot`` for what is not carried). Pools a reload retired are left out.
    ///
    /// Changes nothing: the pools keep lending. O(ads held).
    /// - Parameter ordered: false leaves each pool's ads and leases in no particular order
    ///   (not sorted: O(ads) instead of O(ads log ads)), for a store that needs only what is
    ///   held (a restore orders them itself): the pool journal's compaction, on the loop.
    public func snapshot(ordered: Bool = true) -> [PoolSnapshot] {
        let now = self.now
        var result: [PoolSnapshot] = []
        for name in entries.keys.sorted() {
            guard let entry = entries[name] else { continue }
            for pool in sortedPools(of: entry) {
                result.append(pool.snapshot(leases: leases, blocks: blockLists[name], at: now, ordered: ordered))
            }
        }
        return result
    }

    /// The snapshot of one pool, or nil when `loader` has no pool for `adUnitID` and `consentClass`.
    public func snapshot(loader: String, adUnitID: String, consentClass: String = "default") -> PoolSnapshot? {
        guard let pool = entries[loader]?.pools[PoolKey(adUnitID: adUnitID, consentClass: consentClass)] else {
            return nil
        }
        return pool.snapshot(leases: leases, blocks: blockLists[loader], at: now)
    }

    /// Puts snapshots' ads and leases back into the pools of the loaders named, creating the
    /// pools as needed, as of now: what expired meanwhile is dropped as an expiry would drop
    /// it, leases whose timeout passed end as a reclaim would end them.
    ///
    /// For each snapshot whose loader is configured, enabled and of the same format (else it
    /// is listed in ``PoolRestoreResult/skipped`` and its ads are not taken):
    /// - its creative blocks that have not ended join the loader's (a later end wins);
    /// - a pool created here takes the snapshot's demand estimate and Prefetch count;
    /// - each ad is counted as loaded and announced by a `received` event; its source context
    ///   is rebuilt by the pool's source (``DemandSource/restoreContext(from:for:)``). An
    ///   available ad with less than the minimum remaining life left is dropped as expired
    ///   (event `expired`, the source's loss notice); one whose creative is blocked or does not
    ///   fit the format is removed as invalidated;
    /// - each lease reopens under its id, for its slot (unless the slot holds another lease
    ///   by now), ending no later than its ad; a lease whose end has passed is reclaimed at once
    ///   (its ad back in the pool, or dropped as expired);
    /// - an ad the pool holds already (same id), or a lease whose id is open already, is left
    ///   out and counted in ``PoolRestoreResult/duplicates`` (the same snapshot restored twice).
    ///
    /// Ads count against ``maximumAds`` like loaded ones; a restore is never refused by it.
    /// Nothing is asked upstream here; parked borrows are served from what was restored.
    @discardableResult
    public func restore(_ snapshots: [PoolSnapshot]) -> PoolRestoreResult {
        var result = PoolRestoreResult()
        var touched: [ObjectIdentifier: AdPool] = [:]
        var due: [LeaseHandle] = []
        let now = self.now
        let nowMilliseconds = now.unixMilliseconds
        for snapshot in snapshots {
            func skip(_ reason: String) {
                result.skipped.append(.init(loader: snapshot.loader, adUnitID: snapshot.adUnitID, reason: reason))
            }
            if isShutDown {
                skip("the loader is shut down")
                continue
            }
            guard let entry = entries[snapshot.loader] else {
                skip("unknown loader")
                continue
            }
            let configuration = entry.configuration
            guard configuration.enabled else {
                skip("loader is disabled")
                continue
            }
            guard configuration.format == snapshot.format else {
                skip("format changed (\(snapshot.format) -> \(configuration.format))")
                continue
            }
            guard !snapshot.adUnitID.isEmpty else {
                skip("empty ad unit")
                continue
            }
            // An ad bought for one consent class never goes to another's pool.
            guard configuration.consent.classes.contains(where: { $0.name == snapshot.consentClass }) else {
                skip("consent class \"\(snapshot.consentClass)\" no longer configured")
                continue
            }
            let key = PoolKey(adUnitID: snapshot.adUnitID, consentClass: snapshot.consentClass)
            let isNew = entry.pools[key] == nil
            let pool: AdPool
            do {
                pool = try self.pool(for: entry, key: key)
            } catch {
                skip("pool limit (loaders.\(snapshot.loader).maximumPools)")
                continue
            }
            if configuration.invalidationBlockTime > .zero {
                for (key, until) in snapshot.blockedCreatives where until.unixMilliseconds > nowMilliseconds {
                    blockLists[snapshot.loader, default: CreativeBlockList()].block(
                        key, until: until.unixMilliseconds, now: nowMilliseconds,
                        capacity: configuration.maximumBlockedCreatives)
                }
            }
            if isNew {
                pool.restoreDemand(
                    snapshot.demand, prefetchWanted: snapshot.prefetchWanted,
                    maximum: configuration.maximumRetainedAdvertisements, at: nowMilliseconds)
            }
            touched[ObjectIdentifier(pool)] = pool
            // A pool that was there already may hold these ads (the same snapshot restored
            // twice): an ad id is never held twice.
            var held: Set<String> = []
            if !isNew { pool.forEachRecord { _, record in held.insert(record.ad.id) } }
            for pooled in snapshot.ads {
                if !held.isEmpty, held.contains(pooled.ad.id) {
                    result.duplicates += 1
                    continue
                }
                let ad = restoredAd(pooled, for: pool)
                let drop: AdDropReason?
                if !ad.creative.fits(configuration.format) || isCreativeBlocked(ad, loader: pool.loader) {
                    drop = .invalidated
                } else if !isLendable(expiresAt: ad.expiresAt, in: pool) {
                    drop = .expired
                } else {
                    drop = nil
                }
                if let drop {
                    pool.countDropped(drop)
                    emit(.received, pool) { $0.adID = ad.id }
                    reportDropped(ad, from: pool, reason: drop)
                    if drop == .expired { result.expired += 1 } else { result.removed += 1 }
                } else {
                    pool.insertAvailable(ad, sequence: ids.nextRestoredSequence())
                    emit(.received, pool) { $0.adID = ad.id }
                    result.ads += 1
                }
            }
            for leased in snapshot.leases {
                if leased.leaseID == 0 || leases.handle(forID: leased.leaseID, ids: ids) != nil
                    || (!held.isEmpty && held.contains(leased.pooled.ad.id))
                {
                    result.duplicates += 1
                    continue
                }
                let ad = restoredAd(leased.pooled, for: pool)
                let adHandle = pool.insertAvailable(ad, sequence: ids.nextRestoredSequence())
                emit(.received, pool) { $0.adID = ad.id }
                let expiresAt = min(leased.expiresAt, ad.expiresAt)
                let leaseHandle = leases.restore(
                    LeaseTable.Record(
                        id: leased.leaseID, pool: pool, adHandle: adHandle, slot: leased.slot, expiresAt: expiresAt),
                    ids: ids)
                pool.reopen(adHandle, to: leaseHandle, slot: leased.slot)
                var pendingDrop = leased.pendingDrop
                if pendingDrop == nil,
                    !ad.creative.fits(configuration.format) || isCreativeBlocked(ad, loader: pool.loader)
                {
                    pendingDrop = .invalidated
                }
                if let pendingDrop { pool.markPendingDrop(adHandle, reason: pendingDrop) }
                if expiresAt.unixMilliseconds <= nowMilliseconds {
                    due.append(leaseHandle)
                } else {
                    result.leases += 1
                }
            }
        }
        // Leases that ended meanwhile end now, as the lease timer would have ended them.
        for handle in due {
            let pool = leases[handle].pool
            pool.countReclaim()
            result.reclaimed += 1
            switch endLease(handle, .reclaimed) {
            case .backInPool: result.ads += 1
            case .expired: result.expired += 1
            case .consumed, .removed, .invalidated: result.removed += 1
            }
        }
        result.pools = touched.count
        for pool in touched.values.sorted(by: { ($0.loader, $0.adUnitID) < ($1.loader, $1.adUnitID) }) {
            serveParked(pool)
            purgeExpired(pool)
            scheduleSweep(pool)
        }
        scheduleLeaseTimer()
        return result
    }

    /// A snapshot's ad as `pool` keeps it: its context rebuilt by the pool's source, its id
    /// noted so that no later ad repeats it, counted as loaded.
    private func restoredAd(_ pooled: PoolSnapshot.PooledAd, for pool: AdPool) -> Ad {
        var ad = pooled.ad
        if ad.loader != pool.loader { ad.loader = pool.loader }
        if ad.adUnitID != pool.adUnitID { ad.adUnitID = pool.adUnitID }
        if ad.format != pool.configuration.format { ad.format = pool.configuration.format }
        if ad.showCount < 0 { ad.showCount = 0 }
        if let state = pooled.sourceState { ad.sourceContext = pool.source.restoreContext(from: state, for: ad) }
        ids.noteRestored(adID: ad.id)
        pool.adArrived(lifeMilliseconds: ad.expiresAt.unixMilliseconds - ad.loadedAt.unixMilliseconds)
        return ad
    }
}
