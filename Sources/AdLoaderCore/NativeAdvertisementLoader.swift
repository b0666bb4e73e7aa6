/// Keeps native ads loaded per (loader, ad unit) and lends them to feed cells.
///
/// Each (loader, ad unit) has its own pool. Available ads sit in a heap ordered by expiry,
/// so lending the soonest-expiring ad, and sweeping expired ones, costs O(log n) per ad and
/// O(1) when nothing is due; lease timeouts share one heap and one scheduled wakeup.
///
/// - Important: not thread-safe. Create, call and observe it on one thread (the daemon's
///   event loop); demand-source completions and scheduler actions arrive on that thread.
public final class NativeAdvertisementLoader {
    /// One named loader and its pools, by ad unit.
    final class Entry {
        var configuration: LoaderConfiguration
        let source: any DemandSource
        var pools: [String: AdPool] = [:]
        /// The pool found last, checked before hashing the ad unit (pools are never removed).
        var lastPool: (adUnitID: String, pool: AdPool)?

        init(configuration: LoaderConfiguration, source: any DemandSource) {
            self.configuration = configuration
            self.source = source
        }
    }

    let clock: any AdClock
    let scheduler: any AdScheduler
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) var entries: [String: Entry] = [:]
    /// The entry found last by ``validated(adUnitID:loader:)``, checked before hashing the name
    /// (`entries` never changes after `init`).
    @exclusivity(unchecked) var lastEntry: (name: String, entry: Entry)?
    @exclusivity(unchecked) var ids: IdentifierGenerator
    @exclusivity(unchecked) var jitter: SplitMix64
    @exclusivity(unchecked) var leases = LeaseTable()
    @exclusivity(unchecked) var leaseTimer: (any ScheduledTask)?
    @exclusivity(unchecked) var leaseTimerDeadline: AdInstant?
    @exclusivity(unchecked) var observers: [(token: ObserverToken, callback: (AdEvent) -> Void)] = []
    @exclusivity(unchecked) var nextObserverToken: UInt64 = 1
    /// Called with every ad that left the loader for good (expired, consumed, disabled,
    /// invalidated, shut down), after its event: it will never be lent again, so a cache keyed
    /// by ad id (the wire layer's encodings of lent ads) forgets it here rather than keep it
    /// alive. Unlike observers it costs nothing on a borrow or a return.
    @exclusivity(unchecked) public var onAdRetired: ((Ad) -> Void)?
    @exclusivity(unchecked) var isShutDown = false

    /// - Parameters:
    ///   - loaders: the named configurations; each is validated, names must be unique.
    ///   - sources: demand sources by name; every loader's `source` must be present.
    ///   - clock: the source of "now".
    ///   - scheduler: runs sweeps, retries, lease timeouts and borrow waits.
    ///   - idSeed: distinguishes ad and lease ids of this instance from earlier ones; with the
    ///     same seed and the same calls, ids, retry jitter and events repeat exactly.
    /// - Throws: ``ConfigError`` naming the first bad setting: a field out of range,
    ///   `loaders.<name>.name` for a duplicate name, `loaders.<name>.source` for a source
    ///   missing from `sources`.
    public init(
        loaders: [LoaderConfiguration], sources: [String: any DemandSource], clock: any AdClock,
        scheduler: any AdScheduler, idSeed: UInt64 = 0
    ) throws(ConfigError) {
        self.clock = clock
        self.scheduler = scheduler
        self.ids = IdentifierGenerator(seed: idSeed)
        self.jitter = SplitMix64(seed: idSeed ^ 0x6A69_7474_6572_2121)
        for configuration in loaders {
            try configuration.validate()
            let name = configuration.name
            if entries[name] != nil {
                throw ConfigError(field: "loaders.\(name).name", message: "duplicate loader name \"\(name)\"")
            }
            guard let source = sources[configuration.source] else {
                throw ConfigError(
                    field: "loaders.\(name).source", message: "unknown demand source \"\(configuration.source)\"")
            }
            entries[name] = Entry(configuration: configuration, source: source)
        }
    }

    /// The configured loaders, by name; `enabled` reflects ``setEnabled(_:loader:)``.
    public var configurations: [String: LoaderConfiguration] { entries.mapValues(\.configuration) }

    /// Tops the pool up to `maximumRetainedAdvertisements`, counting loaded and in-flight ads.
    ///
    /// Missing ads are asked for in whole batches of `numberOfAdvertisements` plus one partial
    /// batch for the rest, so the pool fills completely (unlike the automatic top-ups after a
    /// borrow, which send whole batches only; see ``LoaderConfiguration/numberOfAdvertisements``).
    /// Nothing is asked while the source is unreachable (a probe covers it).
    /// - Throws: ``LoaderError`` `.invalidArgument` for an empty ad unit or unknown loader,
    ///   `.unavailable` for a disabled loader or after shutdown, `.resourceExhausted` for a
    ///   new ad unit when the loader already has ``LoaderConfiguration/maximumPools`` pools.
    @discardableResult
    public func prefetch(adUnitID: String, loader: String = LoaderConfiguration.defaultName) throws(LoaderError)
        -> PrefetchResult
    {
        let entry = try validated(adUnitID: adUnitID, loader: loader)
        try requireEnabled(entry)
        let pool = try pool(for: entry, adUnitID: adUnitID)
        purgeExpired(pool)
        let requested = topUp(pool, trigger: .explicit, amount: .complete)
        return PrefetchResult(available: pool.available.count, inFlight: pool.inFlight, requested: requested)
    }

    /// Lends one valid ad, now or, when the caller may wait, once one can be lent.
    ///
    /// The answer is the return value: ``BorrowOutcome/answered(_:)`` when an ad is available,
    /// the slot already holds a lease, or `wait` is zero; ``BorrowOutcome/parked(_:)`` when the
    /// borrow waits; ``BorrowOutcome/parkingRefused`` when it would have waited but `mayPark`
    /// is false. `whenServed` is called only for a parked borrow, exactly once, later (from a
    /// source completion or a scheduler action, never from inside this call), unless the
    /// handle is cancelled first.
    ///
    /// The ad lent is the valid available one that expires soonest. Every borrow, hit or miss,
    /// then tops the pool up in whole batches: it asks for `numberOfAdvertisements` ads per
    /// request once at least that many are missing, and for a partial batch only when the pool
    /// is running dry (nothing available or in flight beyond the borrows already parked). So
    /// at steady traffic the pool floats between `maximumRetainedAdvertisements` minus
    /// `numberOfAdvertisements - 1` and the maximum, and each request carries a whole batch.
    /// A borrow loads even while automatic retries are held back after failures.
    ///
    /// An expired ad is never lent. When more ads have expired than one call removes (see
    /// ``LoaderConfiguration/sweepInterval``), the borrow answers as if the pool were empty
    /// (or parks) and the removal continues in scheduler callbacks due at once; parked
    /// borrows are served when it is done.
    /// - Parameters:
    ///   - slot: the feed cell; while it holds a lease, borrowing for it returns the same lease
    ///     (`reused: true`). If that lease's ad has expired, the lease ends and a fresh ad is
    ///     lent. An empty string means no slot.
    ///   - wait: how long to park when the pool is empty; at most the loader's `maximumBorrowWait`.
    ///     Parked borrows are served in arrival order as ads arrive or come back. Checked
    ///     first, whatever `mayPark` is.
    ///   - mayPark: false when the caller cannot hold one more waiting borrow (its parked-borrow
    ///     limit): a borrow that would park answers ``BorrowOutcome/parkingRefused`` instead,
    ///     counted as a miss. A borrow that can be answered now is answered as usual.
    ///   - whenServed: the later answer of a parked borrow.
    /// - Throws: ``LoaderError`` `.invalidArgument` (empty ad unit, unknown loader, wait too
    ///   long or negative: field `wait_ms`), `.unavailable` (disabled loader, after shutdown),
    ///   `.resourceExhausted` (a new ad unit when the loader already has
    ///   ``LoaderConfiguration/maximumPools`` pools).
    public func borrow(
        adUnitID: String, loader: String = LoaderConfiguration.defaultName, slot: String? = nil,
        wait: Duration = .zero, mayPark: Bool = true, whenServed: @escaping (BorrowResult) -> Void
    ) throws(LoaderError) -> BorrowOutcome {
        let entry = try validated(adUnitID: adUnitID, loader: loader)
        if wait < .zero || wait > entry.configuration.maximumBorrowWait {
            throw LoaderError(
                code: .invalidArgument, field: "wait_ms",
                message: "must be 0...\(entry.configuration.maximumBorrowWait.milliseconds) ms")
        }
        try requireEnabled(entry)
        let pool = try pool(for: entry, adUnitID: adUnitID)
        let slot = slot?.isEmpty == true ? nil : slot
        if let result = lend(from: pool, slot: slot) {
            topUp(pool, trigger: .explicit)
            return .answered(result)
        }
        if wait == .zero || !mayPark {
            pool.stats.borrowMisses += 1
            topUp(pool, trigger: .explicit)
            return wait == .zero ? .answered(.noAdYet) : .parkingRefused
        }
        let handle = park(in: pool, slot: slot, wait: wait, whenServed: whenServed)
        topUp(pool, trigger: .explicit)
        return .parked(handle)
    }

    /// Ends a lease.
    ///
    /// Unshown, the ad goes back to the pool (or is counted expired). Shown, its `showCount`
    /// grows; at `showCountThreshold` it is consumed, else it goes back to the pool.
    /// - Throws: ``LoaderError`` `.notFound` (field `lease_id`) for an unknown, returned or
    ///   reclaimed lease; `.unavailable` after shutdown.
    @discardableResult
    public func returnLease(_ leaseID: UInt64, shown: Bool) throws(LoaderError) -> ReturnOutcome {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        guard let handle = leases.handle(forID: leaseID, ids: ids) else {
            throw LoaderError(
                code: .notFound, field: "lease_id", message: "no open lease \(leaseID) (returned, reclaimed or unknown)")
        }
        return endLease(handle, .returned(shown: shown))
    }

    /// Whether `leaseID` names an open lease (one ``returnLease(_:shown:)`` would end).
    public func hasLease(_ leaseID: UInt64) -> Bool {
        !isShutDown && leases.handle(forID: leaseID, ids: ids) != nil
    }

    /// The configuration of the loader called `name`, or nil.
    public func configuration(named name: String) -> LoaderConfiguration? { entries[name]?.configuration }

    /// Stats of every pool matching the filters (nil = all), sorted by loader then ad unit.
    ///
    /// Never creates a pool: an ad unit without one is simply not listed.
    public func stats(loader: String? = nil, adUnitID: String? = nil) -> [PoolStats] {
        var result: [PoolStats] = []
        for (name, entry) in entries where loader == nil || loader == name {
            for (unit, pool) in entry.pools where adUnitID == nil || adUnitID == unit {
                result.append(pool.currentStats)
            }
        }
        return result.sorted { ($0.loader, $0.adUnitID) < ($1.loader, $1.adUnitID) }
    }

    /// The counters of the demand sources of every loader matching the filter (nil = all) that
    /// keep any (``DemandSource/statistics``), one entry per source, sorted by name.
    public func sourceStats(loader: String? = nil) -> [DemandSourceStats] {
        var result: [String: DemandSourceStats] = [:]
        for (name, entry) in entries where loader == nil || loader == name {
            let sourceName = entry.configuration.source
            guard result[sourceName] == nil, var stats = entry.source.statistics else { continue }
            stats.name = sourceName
            result[sourceName] = stats
        }
        return result.values.sorted { $0.name < $1.name }
    }

    /// Registers an observer called synchronously, on the loader's thread, for every event.
    ///
    /// Observers run in registration order, after the loader's state is settled for the event.
    public func addObserver(_ observer: @escaping (AdEvent) -> Void) -> ObserverToken {
        let token = ObserverToken(rawValue: nextObserverToken)
        nextObserverToken += 1
        observers.append((token, observer))
        return token
    }

    public func removeObserver(_ token: ObserverToken) {
        observers.removeAll { $0.token == token }
    }

    /// Disabling drops the loader's ads (each reported as removed, reason "disabled"), ends
    /// its parked borrows with `.unavailable` and stops filling until enabled again.
    ///
    /// Leased ads stay with their cells; when their lease ends they are removed (the return
    /// answers `.removed`). Ads arriving for requests in flight while disabled are dropped.
    /// - Throws: ``LoaderError`` `.invalidArgument` (field `loader`) for an unknown loader,
    ///   `.unavailable` after shutdown.
    public func setEnabled(_ enabled: Bool, loader: String) throws(LoaderError) {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        guard let entry = entries[loader] else {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"\(loader)\"")
        }
        guard entry.configuration.enabled != enabled else { return }
        entry.configuration.enabled = enabled
        for pool in sortedPools(of: entry) {
            pool.enabled = enabled
            if !enabled { drain(pool, reason: .disabled) }
        }
    }

    /// Ends every parked borrow with `.unavailable`, cancels timers and stops loading; later
    /// calls throw `.unavailable`. Ads in flight are dropped when they arrive.
    ///
    /// Every retained ad is removed (reason "shutdown") and every open lease ends, so the
    /// counters still add up.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        leaseTimer?.cancel()
        leaseTimer = nil
        leaseTimerDeadline = nil
        let allPools = entries.keys.sorted().flatMap { sortedPools(of: entries[$0]!) }
        for pool in allPools {
            pool.enabled = false
            drain(pool, reason: .shutdown)
        }
        for handle in leases.allHandles {
            endLease(handle, .adDropped(.shutdown))
        }
    }

    // MARK: - Helpers shared by the extensions

    var now: AdInstant { clock.now }

    func validated(adUnitID: String, loader: String) throws(LoaderError) -> Entry {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        if adUnitID.isEmpty { throw LoaderError(code: .invalidArgument, field: "ad_unit_id", message: "must not be empty") }
        // Comparing with the name used last (inline for short names) is much cheaper than
        // hashing it: calls name the same few loaders over and over.
        if let last = lastEntry, last.name == loader { return last.entry }
        guard let entry = entries[loader] else {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"\(loader)\"")
        }
        lastEntry = (loader, entry)
        return entry
    }

    func requireEnabled(_ entry: Entry) throws(LoaderError) {
        guard entry.configuration.enabled else {
            throw LoaderError(code: .unavailable, message: "loader \"\(entry.configuration.name)\" is disabled")
        }
    }

    /// The pool of `adUnitID`, created if the loader is below its `maximumPools`.
    /// - Throws: ``LoaderError`` `.resourceExhausted` naming the limit when a new pool is needed
    ///   and the loader is at it.
    func pool(for entry: Entry, adUnitID: String) throws(LoaderError) -> AdPool {
        // As for loader names: the ad unit used last first, then the table.
        if let last = entry.lastPool, last.adUnitID == adUnitID { return last.pool }
        if let pool = entry.pools[adUnitID] {
            entry.lastPool = (adUnitID, pool)
            return pool
        }
        let name = entry.configuration.name
        let limit = entry.configuration.maximumPools
        if entry.pools.count >= limit {
            throw LoaderError(
                code: .resourceExhausted,
                message: "pools: limit of \(limit) ad units reached for loader \"\(name)\" (loaders.\(name).maximumPools)")
        }
        let pool = AdPool(
            loader: entry.configuration.name, adUnitID: adUnitID, configuration: entry.configuration,
            source: entry.source)
        entry.pools[adUnitID] = pool
        entry.lastPool = (adUnitID, pool)
        return pool
    }

    func sortedPools(of entry: Entry) -> [AdPool] {
        entry.pools.keys.sorted().map { entry.pools[$0]! }
    }

    /// Drops a pool's available ads, marks its leased ads for removal, ends its parked
    /// borrows with `.unavailable` and stops its timers and retries.
    func drain(_ pool: AdPool, reason: AdDropReason) {
        pool.cancelTimers()
        pool.fill.reset()
        for handle in pool.availableHandles {
            let ad = pool.discard(handle)
            pool.countDropped(reason)
            reportDropped(ad, from: pool, reason: reason)
        }
        markLeasedAds(of: pool, reason: reason)
        for parked in pool.parked.removeAll() {
            parked.take()?(.unavailable)
        }
    }

    /// Reports an ad that left `pool` for good, already counted (``AdPool/countDropped(_:)``):
    /// an `expired` event, or a `removed` event with the reason; then, for an ad never shown,
    /// the source's ``DemandSource/adDropped(_:reason:)`` notice.
    func reportDropped(_ ad: Ad, from pool: AdPool, reason: AdDropReason) {
        if reason == .expired {
            emit(.expired, pool) { $0.adID = ad.id }
        } else {
            emit(.removed, pool) {
                $0.adID = ad.id
                $0.reason = AdEvent.Reason(reason)
            }
        }
        if ad.showCount == 0 { pool.source.adDropped(ad, reason: reason) }
        onAdRetired?(ad)
    }

    /// Builds an event for `pool`, lets `configure` fill it in, and delivers it.
    func emit(_ kind: AdEvent.Kind, _ pool: AdPool, _ configure: (inout AdEvent) -> Void = { _ in }) {
        guard !observers.isEmpty else { return }
        var event = AdEvent(kind: kind, at: now, loader: pool.loader, adUnitID: pool.adUnitID)
        configure(&event)
        for observer in observers { observer.callback(event) }
    }
}
