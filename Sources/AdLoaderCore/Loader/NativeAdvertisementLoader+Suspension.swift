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

    /// ``restore(_:)`` of a suspension at start, counting in each pool's Stats what came back
    /// (``PoolStats/restoredAds``, ``PoolStats/restoredLeases``).
    @discardableResult
    public func restoreSuspension(_ snapshots: [PoolSnapshot]) -> PoolRestoreResult {
        let result = restore(snapshots)
        for snapshot in snapshots {
            guard
                let pool = entries[snapshot.loader]?.pools[
                    PoolKey(adUnitID: snapshot.adUnitID, consentClass: snapshot.consentClass)]
            else { continue }
            var held: Set<String> = []
            pool.forEachRecord { _, record in held.insert(record.ad.id) }
            let ads =
                snapshot.ads.lazy.filter { held.contains($0.ad.id) }.count
                + snapshot.leases.lazy.filter { held.contains($0.pooled.ad.id) }.count
            let open = snapshot.leases.lazy.filter { self.leases.handle(forID: $0.leaseID, ids: self.ids) != nil }.count
            pool.countRestored(ads: ads, leases: open)
        }
        return result
    }
}
