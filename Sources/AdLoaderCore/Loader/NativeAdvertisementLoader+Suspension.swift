/// A clean stop with a pool store: the pools are suspended (``PoolSnapshot``s for the store, no
/// loss notice for an ad kept) and restored at the next start.
extension NativeAdvertisementLoader {
    /// Takes every pool's snapshot for the pool store, then shuts the loader down
    /// (``shutdown()``) without telling any source of a loss for the ads taken.
    ///
    /// Not taken, so dropped by the shutdown as before with their loss notices: an ad whose
    /// context keeps nothing (``AdSourceContext/snapshotState`` nil: it could not fire its
    /// notices after a restart), and a leased ad already leaving (its loader disabled).
    /// - Returns: the snapshots, by loader then ad unit; empty when already shut down.
    public func suspend() -> [PoolSnapshot] {
        guard !isShutDown else { return [] }
        var withContext: Set<String> = []
        for entry in entries.values {
            for pool in entry.pools.values {
                pool.forEachRecord { _, record in
                    if record.ad.sourceContext != nil { withContext.insert(record.ad.id) }
                }
            }
        }
        var snapshots = snapshot()
        var kept: Set<String> = []
        for index in snapshots.indices {
            func keeps(_ pooled: PoolSnapshot.PooledAd) -> Bool {
                pooled.sourceState != nil || !withContext.contains(pooled.ad.id)
            }
            snapshots[index].ads.removeAll { !keeps($0) }
            snapshots[index].leases.removeAll { $0.pendingDrop != nil || !keeps($0.pooled) }
            for pooled in snapshots[index].ads { kept.insert(pooled.ad.id) }
            for leased in snapshots[index].leases { kept.insert(leased.pooled.ad.id) }
        }
        suspendedAdIDs = kept
        shutdown()
        suspendedAdIDs = []
        return snapshots
    }

    /// ``restore(_:)`` of a suspension at start (or of the journal after a crash: `origin`),
    /// counting in each pool's Stats what came back (``PoolStats/restoredAds``,
    /// ``PoolStats/restoredLeases``) and emitting one `restored` event per pool the snapshots
    /// named (its ads back, leases back, ads expired meanwhile), kept for a Watch that opens
    /// later (``restorations(loader:adUnitID:)``).
    @discardableResult
    public func restoreSuspension(
        _ snapshots: [PoolSnapshot], from origin: AdEvent.Restoration.Origin = .suspension
    ) -> PoolRestoreResult {
        func pool(of snapshot: PoolSnapshot) -> AdPool? {
            entries[snapshot.loader]?.pools[PoolKey(adUnitID: snapshot.adUnitID, consentClass: snapshot.consentClass)]
        }
        // A pool's expired count before the restore: what it adds is what expired while down.
        var expiredBefore: [Int: UInt64] = [:]
        for (index, snapshot) in snapshots.enumerated() {
            if let pool = pool(of: snapshot) { expiredBefore[index] = pool.stats.expired }
        }
        let result = restore(snapshots)
        let now = self.now
        for (index, snapshot) in snapshots.enumerated() {
            guard let pool = pool(of: snapshot) else { continue }
            var held: Set<String> = []
            pool.forEachRecord { _, record in held.insert(record.ad.id) }
            let ads =
                snapshot.ads.lazy.filter { held.contains($0.ad.id) }.count
                + snapshot.leases.lazy.filter { held.contains($0.pooled.ad.id) }.count
            let open = snapshot.leases.lazy.filter { self.leases.handle(forID: $0.leaseID, ids: self.ids) != nil }.count
            let expired = Int(pool.stats.expired - (expiredBefore[index] ?? 0))
            pool.restored(ads: ads, AdEvent.Restoration(origin: origin, leases: open, expired: expired), at: now)
            emit(.restored, pool) {
                $0.count = ads
                $0.restoration = AdEvent.Restoration(origin: origin, leases: open, expired: expired)
            }
        }
        return result
    }

    /// One `restored` event per pool the pool store gave back at this start and that still
    /// exists, matching `loader` and `adUnitID` (empty: every one), by loader then ad unit, as
    /// the restore emitted it (its time, its counts): what a Watch sends first when it opens,
    /// since no call, Watch included, is served before the restore.
    public func restorations(loader: String = "", adUnitID: String = "") -> [AdEvent] {
        var events: [AdEvent] = []
        for name in entries.keys.sorted() where loader.isEmpty || name == loader {
            guard let entry = entries[name] else { continue }
            for pool in sortedPools(of: entry) where adUnitID.isEmpty || pool.adUnitID == adUnitID {
                guard let restored = pool.restoration else { continue }
                var event = AdEvent(kind: .restored, at: restored.at, loader: pool.loader, adUnitID: pool.adUnitID)
                event.consentClass = pool.key.consentClass
                event.count = restored.ads
                event.restoration = restored.restoration
                events.append(event)
            }
        }
        return events
    }
}
