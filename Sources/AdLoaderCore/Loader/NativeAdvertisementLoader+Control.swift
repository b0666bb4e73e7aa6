/// Run-time control: invalidating a creative, reconfiguring the loaders, and what Stats shows
/// of each loader.
extension NativeAdvertisementLoader {
    // MARK: Invalidation

    /// Ends a lease like ``returnLease(_:shown:)`` and takes the ad's creative out of its
    /// loader: the ad is dropped (event `removed`, reason "invalidated", `note` = `reason`),
    /// the loader's other ads of the creative are dropped from every pool (ads of it out on
    /// other leases are removed when those end, and never lent again meanwhile), and ads of it
    /// arriving within ``LoaderConfiguration/invalidationBlockTime`` are dropped on arrival.
    /// The source hears `adDropped(_, .invalidated)` for each of these ads never shown (an ad
    /// shown under this lease counts the show, `adShown`, and gets no loss notice).
    ///
    /// A creative is identified by its ``CreativeKey``. A loader keeps at most
    /// ``LoaderConfiguration/maximumBlockedCreatives`` blocks; one more lifts the block that
    /// would end soonest. Blocking is O(blocks) and dropping the siblings O(ads of the
    /// loader): an operator's action, not a hot path. A lease of a pool a reload retired drops
    /// its ad but blocks nothing (its loader is gone or changed).
    /// - Parameters:
    ///   - shown: whether the ad was shown under this lease.
    ///   - reason: why, e.g. "bad creative"; carried by the `removed` events.
    /// - Returns: ``ReturnOutcome/invalidated``.
    /// - Throws: ``LoaderError`` as ``returnLease(_:shown:)``: `.notFound` (field `lease_id`)
    ///   for no open lease, `.unavailable` after shutdown.
    @discardableResult
    public func invalidateLease(_ leaseID: UInt64, shown: Bool, reason: String) throws(LoaderError) -> ReturnOutcome {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        guard let handle = leases.handle(forID: leaseID, ids: ids) else {
            throw LoaderError(code: .notFound, field: "lease_id", message: notFoundMessage(leaseID))
        }
        let lease = leases[handle]
        let pool = lease.pool
        let key = CreativeKey(pool[lease.adHandle].ad)
        let loader = pool.loader
        let isCurrent = !pool.isRetired && entries[loader] != nil
        if isCurrent, let configuration = entries[loader]?.configuration, configuration.invalidationBlockTime > .zero {
            let nowMilliseconds = now.unixMilliseconds
            blockLists[loader, default: CreativeBlockList()].block(
                key, until: nowMilliseconds &+ configuration.invalidationBlockTime.milliseconds, now: nowMilliseconds,
                capacity: configuration.maximumBlockedCreatives)
        }
        pool.markPendingDrop(lease.adHandle, reason: .invalidated)
        let outcome = endLease(handle, .invalidated(shown: shown), note: reason)
        if isCurrent, let entry = entries[loader] { dropCreative(key, of: entry, note: reason) }
        return outcome
    }

    /// Whether `ad`'s creative is blocked in `loader` now (an arriving ad is dropped then).
    func isCreativeBlocked(_ ad: Ad, loader: String) -> Bool {
        guard !blockLists.isEmpty, blockLists[loader] != nil else { return false }
        let blocked = blockLists[loader]!.isBlocked(CreativeKey(ad), at: now.unixMilliseconds)
        if blockLists[loader]!.isEmpty { blockLists[loader] = nil }
        return blocked
    }

    /// Whether the creative of `ad` is blocked in `loader` now (see ``invalidateLease(_:shown:reason:)``).
    public func isCreativeBlocked(of ad: Ad, in loader: String) -> Bool { isCreativeBlocked(ad, loader: loader) }

    /// Drops every available ad of `key` from the entry's pools and marks its leased ones for
    /// removal; pools that lost ads top up.
    private func dropCreative(_ key: CreativeKey, of entry: Entry, note: String) {
        // Leased ads first, in one pass over the leases (not one per pool).
        let name = entry.configuration.name
        for leaseHandle in leases.allHandles {
            let lease = leases[leaseHandle]
            let pool = lease.pool
            guard pool.loader == name, !pool.isRetired else { continue }
            if case .leased = pool[lease.adHandle].state, key.matches(pool[lease.adHandle].ad) {
                pool.markPendingDrop(lease.adHandle, reason: .invalidated)
            }
        }
        for pool in sortedPools(of: entry) {
            var dropped = false
            for handle in pool.availableHandles where key.matches(pool[handle].ad) {
                let ad = pool.dropAvailable(handle, reason: .invalidated)
                reportDropped(ad, from: pool, reason: .invalidated, note: note)
                dropped = true
            }
            if dropped { topUp(pool, trigger: .automatic) }
        }
    }

    // MARK: Reconfiguration

    /// Replaces the loaders' configurations (a configuration reload), keeping what can be
    /// kept. Everything is validated first: on a throw nothing changed.
    ///
    /// - A loader not in `loaders` is removed: its available ads are dropped (event
    ///   `removed`, reason "reconfigured"), its parked borrows end with `.unavailable`, its
    ///   blocked creatives are forgotten; its leases stay open until returned or reclaimed
    ///   (the return answers `.removed`). Ads arriving for it later are dropped.
    /// - A loader whose source, format or upstream request changed
    ///   (``LoaderConfiguration/keepsPools(under:)``) is removed and added again the same way.
    /// - Any other change keeps the loader's pools, ads, leases and blocked creatives: the new
    ///   sizing, caps, timeouts, lifetime (for ads loaded from now on), retry, app-open and
    ///   invalidation settings apply from now on. Ads and leases keep their expiry.
    /// - `enabled` changes the loader's state only when it differs from the configuration
    ///   before: a loader disabled at run time stays disabled across a reload that leaves
    ///   `enabled` as it was.
    /// - A new loader is added with no pools.
    ///
    /// Every change is announced by a `loaderChanged` event (reason "added", "removed",
    /// "reconfigured", and "enabled"/"disabled" for `enabled` changes).
    /// - Parameter loaders: every loader from now on; sources must be among those given to `init`.
    /// - Throws: ``ConfigError`` as `init` does (a bad field, a duplicate name, an unknown
    ///   source); `loaders` when the list is empty; `loaders` after shutdown.
    @discardableResult
    public func reconfigure(loaders: [LoaderConfiguration]) throws(ConfigError) -> ReconfigureResult {
        if isShutDown { throw ConfigError(field: "loaders", message: "the loader is shut down") }
        if loaders.isEmpty { throw ConfigError(field: "loaders", message: "at least one loader is needed") }
        var seen: Set<String> = []
        for configuration in loaders {
            try configuration.validate()
            let name = configuration.name
            if !seen.insert(name).inserted {
                throw ConfigError(field: "loaders.\(name).name", message: "duplicate loader name \"\(name)\"")
            }
            if sources[configuration.source] == nil {
                throw ConfigError(
                    field: "loaders.\(name).source", message: "unknown demand source \"\(configuration.source)\"")
            }
        }
        var result = ReconfigureResult()
        lastEntry = nil
        for name in entries.keys.sorted() where !seen.contains(name) {
            retire(entries[name]!)
            entries[name] = nil
            blockLists[name] = nil
            result.removed.append(name)
            emitLoaderChanged(name, .removed)
        }
        for configuration in loaders.sorted(by: { $0.name < $1.name }) {
            let name = configuration.name
            guard let entry = entries[name] else {
                entries[name] = Entry(configuration: configuration, source: sources[configuration.source]!)
                result.added.append(name)
                emitLoaderChanged(name, .added)
                continue
            }
            let before = entry.configured
            if before == configuration {
                result.unchanged.append(name)
                continue
            }
            // The run-time state survives unless the configuration itself changes `enabled`.
            let enabled = before.enabled != configuration.enabled ? configuration.enabled : entry.configuration.enabled
            if before.keepsPools(under: configuration) {
                var running = configuration
                running.enabled = entry.configuration.enabled
                entry.configuration = running
                entry.configured = configuration
                for pool in sortedPools(of: entry) { pool.reconfigure(running) }
                if blockLists[name] != nil {
                    blockLists[name]!.trim(to: configuration.maximumBlockedCreatives, now: now.unixMilliseconds)
                }
                result.changedKeepingPools.append(name)
                emitLoaderChanged(name, .reconfigured)
                if enabled != entry.configuration.enabled { try? setEnabled(enabled, loader: name) }
            } else {
                retire(entry)
                var running = configuration
                running.enabled = enabled
                let replacement = Entry(configuration: running, source: sources[configuration.source]!)
                replacement.configured = configuration
                entries[name] = replacement
                result.changedDroppingPools.append(name)
                emitLoaderChanged(name, .reconfigured)
                if enabled != before.enabled || enabled != entry.configuration.enabled {
                    emitLoaderChanged(name, enabled ? .enabled : .disabled)
                }
            }
        }
        return result
    }

    /// Drains every pool of a loader a reload removes or replaces; pools with leases out live
    /// on in their leases (``LeaseTable/Record/pool``) until those end.
    private func retire(_ entry: Entry) {
        for pool in sortedPools(of: entry) {
            pool.retire()
            drain(pool, reason: .reconfigured)
        }
        entry.pools.removeAll()
        entry.lastPool = nil
    }

    // MARK: Stats

    /// Every configured loader matching the filter (nil = all), sorted by name.
    public func loaderStates(loader: String? = nil) -> [LoaderState] {
        entries.keys.sorted().compactMap { name in
            guard loader == nil || loader == name, let entry = entries[name] else { return nil }
            return LoaderState(
                name: name, enabled: entry.configuration.enabled, source: entry.configuration.source,
                pools: entry.pools.count, blockedCreatives: blockLists[name]?.count ?? 0)
        }
    }
}

extension CreativeKey {
    /// Whether `ad` shows this creative.
    func matches(_ ad: Ad) -> Bool {
        switch self {
        case .sourceID(let id): ad.creativeID == id
        case .content(let creative): (ad.creativeID ?? "").isEmpty && ad.creative == creative
        }
    }
}
