extension NativeAdvertisementLoader {
    /// Takes every pooled ad, leased ones with their leases, for the pool store, then shuts the
    /// loader down (``shutdown()``) without telling any source of a loss for the ads taken.
    ///
    /// An ad whose source cannot encode its context (``DemandSource/encodeContext(_:)``)
    /// is not taken: the shutdown drops it as before, with its loss notice. Ads already
    /// leaving (a disabled or retired loader's) are not taken either.
    /// - Returns: the suspension, pool by pool in name order.
    public func suspend() -> LoaderSuspension {
        var ads: [LoaderSuspension.SuspendedAd] = []
        guard !isShutDown else { return LoaderSuspension(ads: [], suspendedAt: now) }
        var leased: [ObjectIdentifier: [(AdHandle, LeaseHandle)]] = [:]
        for handle in leases.allHandles {
            let record = leases[handle]
            leased[ObjectIdentifier(record.pool), default: []].append((record.adHandle, handle))
        }
        for name in entries.keys.sorted() {
            for pool in sortedPools(of: entries[name]!) where pool.enabled && !pool.isRetired {
                func take(_ ad: Ad) -> [UInt8]? {
                    guard let context = ad.sourceContext else { return [] }
                    return pool.source.encodeContext(context)
                }
                // Soonest expiry first, as they would be lent.
                let available = pool.availableHandles.map { pool[$0] }.sorted { ($0.ad.expiresAt, $0.sequence) < ($1.ad.expiresAt, $1.sequence) }
                for record in available {
                    guard let context = take(record.ad) else { continue }
                    ads.append(.init(ad: record.ad, context: context))
                }
                let lent = (leased[ObjectIdentifier(pool)] ?? []).sorted { leases[$0.1].id < leases[$1.1].id }
                for (adHandle, leaseHandle) in lent {
                    let record = pool[adHandle]
                    guard case .leased = record.state, let context = take(record.ad) else { continue }
                    let lease = leases[leaseHandle]
                    ads.append(
                        .init(ad: record.ad, context: context, lease: .init(id: lease.id, slot: lease.slot, expiresAt: lease.expiresAt)))
                }
            }
        }
        suspendedAdIDs = Set(ads.map(\.ad.id))
        let suspension = LoaderSuspension(ads: ads, suspendedAt: now)
        shutdown()
        suspendedAdIDs = []
        return suspension
    }

    /// Puts a suspension's ads and leases back, with the time that passed applied: an ad
    /// expired meanwhile is dropped as an expiry drops it (its event, its loss notice when
    /// never shown), a lease whose timeout passed is reclaimed (its ad back in the pool when
    /// still lendable). Call it once, before the first call is served.
    ///
    /// Each ad's context is read back by its pool's source (``DemandSource/decodeContext(_:)``).
    /// - Returns: what came back and what did not.
    @discardableResult
    public func restore(_ suspension: LoaderSuspension) -> RestoreReport {
        var report = RestoreReport()
        guard !isShutDown else {
            report.dropped = suspension.ads.count
            return report
        }
        var touched: [ObjectIdentifier: AdPool] = [:]
        for item in suspension.ads {
            var ad = item.ad
            guard let entry = entries[ad.loader], entry.configuration.enabled, ad.creative.fits(entry.configuration.format),
                let pool = try? pool(for: entry, adUnitID: ad.adUnitID)
            else {
                report.dropped += 1
                continue
            }
            if !item.context.isEmpty {
                guard let context = pool.source.decodeContext(item.context) else {
                    report.dropped += 1
                    continue
                }
                ad.sourceContext = context
            }
            touched[ObjectIdentifier(pool)] = pool
            if !isLendable(expiresAt: ad.expiresAt, in: pool) {
                // Expired while down (or too short to lend now): what the sweep would have done.
                if let lease = item.lease {
                    leases.noteEnded(lease.id, .dropped)
                    if lease.expiresAt <= now { report.reclaimedLeases += 1 }
                }
                pool.countDropped(.expired)
                report.expired += 1
                reportDropped(ad, from: pool, reason: .expired)
                continue
            }
            let adHandle = pool.insertAvailable(ad, sequence: ids.lastAdSequence)
            pool.stats.restoredAds += 1
            report.ads += 1
            guard let lease = item.lease else { continue }
            if lease.expiresAt <= now {
                // Its timeout passed while down: reclaimed, the ad stays available.
                leases.noteEnded(lease.id, .reclaimed)
                pool.stats.leasesReclaimed += 1
                report.reclaimedLeases += 1
                continue
            }
            let handle = leases.insertRestored(
                LeaseTable.Record(id: 0, pool: pool, adHandle: adHandle, slot: lease.slot, expiresAt: lease.expiresAt),
                id: lease.id, ids: ids)
            pool.lease(adHandle, to: handle)
            if let slot = lease.slot { pool.slots[slot] = handle }
            pool.stats.restoredLeases += 1
            report.leases += 1
        }
        if report.leases > 0 { scheduleLeaseTimer() }
        for pool in touched.values { scheduleSweep(pool) }
        return report
    }
}
