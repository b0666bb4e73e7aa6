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
        /// As configured, with `enabled` as set at run time (``setEnabled(_:loader:)``).
        var configuration: LoaderConfiguration
        /// As the configuration gave it (init or the last ``reconfigure(loaders:)``): a reload
        /// applies `enabled` only when the configuration changes it.
        var configured: LoaderConfiguration
        let source: any DemandSource
        /// By ad unit and consent class.
        var pools: [PoolKey: AdPool] = [:]
        /// The pool found last, checked before hashing the ad unit (cleared when that pool is
        /// removed).
        var lastPool: (key: PoolKey, pool: AdPool)?

        init(configuration: LoaderConfiguration, source: any DemandSource) {
            self.configuration = configuration
            self.configured = configuration
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
    /// (cleared when ``reconfigure(loaders:)`` changes `entries`).
    @exclusivity(unchecked) var lastEntry: (name: String, entry: Entry)?
    /// The demand sources given to `init`, for loaders a reload adds or moves.
    let sources: [String: any DemandSource]
    /// Creatives clients invalidated, by loader name; a loader without any has no entry, so
    /// an arriving ad costs nothing more while no creative is blocked.
    @exclusivity(unchecked) var blockLists: [String: CreativeBlockList] = [:]
    @exclusivity(unchecked) var ids: IdentifierGenerator
    @exclusivity(unchecked) var jitter: SplitMix64
    @exclusivity(unchecked) var leases = LeaseTable()
    /// The planned feeds (``plan(_:)``).
    @exclusivity(unchecked) var feedTable = FeedTable()
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
    /// The ads ``suspend()`` handed to the pool store: the shutdown that follows tells no
    /// source of their loss.
    @exclusivity(unchecked) var suspendedAdIDs: Set<String> = []
    /// The daemon-wide memory budget shared by every pool.
    let memory = AdMemoryBudget()
    /// Sources for which an ad arriving with less than the minimum remaining life was
    /// reported to ``onExpiredOnArrival`` (once per source).
    @exclusivity(unchecked) var expiredOnArrivalReported: Set<String> = []
    /// Called once per source the first time one of its ads arrives with less than the
    /// minimum remaining life left (it is dropped as expired): the loader, the source and
    /// the minimum that applied. The daemon logs it with the setting to change.
    @exclusivity(unchecked) public var onExpiredOnArrival:
        ((_ loader: String, _ source: String, _ minimum: Duration) -> Void)?

    /// Called when a configured cap starts, changes or stops holding a pool below its demand
    /// (`cap` nil: no longer held back), with the setting that binds; after the `heldBack`
    /// event. Unlike an observer it costs nothing on a borrow. The daemon logs it (rate-limited).
    @exclusivity(unchecked) public var onHeldBack:
        ((_ loader: String, _ adUnitID: String, _ cap: HoldBack?, _ setting: String?) -> Void)?

    /// The most ads every pool together holds loaded (available or leased) or asks for;
    /// `Int.max` for no budget. A top-up beyond it asks for less (or nothing) and the pool is
    /// held back (``HoldBack/memoryBudget``); for a pool with demand, unleased ads of idle
    /// pools first (then of pools stocked beyond their target) are dropped to make room
    /// (``AdDropReason/memoryBudget``). Lowering it drops nothing by itself.
    public var maximumAds: Int {
        get { memory.maximum }
        set { memory.maximum = max(0, newValue) }
    }

    /// Whether a pool with demand that ``maximumAds`` refuses gets room from the least useful
    /// ads (``AdDropReason/memoryBudget``); true unless a benchmark compares without it.
    @exclusivity(unchecked) public var makesRoomUnderMemoryBudget = true

    /// Loaded plus in-flight ads of every pool (at most ``maximumAds``).
    public var adsHeld: Int { memory.held }

    /// The request-rate budgets, by source name (sources without one are not listed).
    @exclusivity(unchecked) var budgets: [String: SourceRequestBudget] = [:]

    /// - Parameters:
    ///   - loaders: the named configurations; each is validated, names must be unique.
    ///   - sources: demand sources by name; every loader's `source` must be present.
    ///   - budgets: request-rate budgets by source name (``RequestRateBudget``); a source
    ///     without one sends as its pools' concurrency caps allow.
    ///   - clock: the source of "now".
    ///   - scheduler: runs sweeps, retries, lease timeouts and borrow waits.
    ///   - idSeed: distinguishes ad and lease ids of this instance from earlier ones; with the
    ///     same seed and the same calls, ids, retry jitter and events repeat exactly.
    /// - Throws: ``ConfigError`` naming the first bad setting: a field out of range,
    ///   `loaders.<name>.name` for a duplicate name, `loaders.<name>.source` for a source
    ///   missing from `sources`, `sources.<name>.maximumRequestsPerSecond` for a budget out of
    ///   range or naming a source missing from `sources`.
    public init(
        loaders: [LoaderConfiguration], sources: [String: any DemandSource],
        budgets: [String: RequestRateBudget] = [:], clock: any AdClock,
        scheduler: any AdScheduler, idSeed: UInt64 = 0
    ) throws(ConfigError) {
        self.clock = clock
        self.scheduler = scheduler
        self.ids = IdentifierGenerator(seed: idSeed)
        self.jitter = SplitMix64(seed: idSeed ^ 0x6A69_7474_6572_2121)
        self.sources = sources
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
        for name in budgets.keys.sorted() {
            let field = "sources.\(name).maximumRequestsPerSecond"
            let budget = budgets[name]!
            try budget.validate(field: field)
            guard sources[name] != nil else {
                throw ConfigError(field: field, message: "a budget for unknown demand source \"\(name)\"")
            }
            self.budgets[name] = SourceRequestBudget(source: name, budget: budget, now: clock.now.unixMilliseconds)
        }
    }

    /// The configured loaders, by name; `enabled` reflects ``setEnabled(_:loader:)``.
    public var configurations: [String: LoaderConfiguration] { entries.mapValues(\.configuration) }

    /// Tops the pool up to its target, counting loaded, leased and in-flight ads: under demand
    /// sizing the larger of the demand target (leased ads plus the stock the measured demand
    /// asks for; ``DemandEstimate``) and the leased ads plus `count`; under fixed sizing
    /// `maximumRetainedAdvertisements`. Never beyond `maximumRetainedAdvertisements`.
    ///
    /// `count` is how many ads the caller will want soon (a first screen's cells): the pool
    /// keeps that many beyond its leases until they are borrowed (each fresh lease takes one
    /// off) or a later Prefetch says otherwise, so what the concurrency cap or the budget held
    /// back is still asked for by later top-ups. Missing ads are asked for in whole batches of
    /// `numberOfAdvertisements` plus one partial batch for the rest, so the pool fills to its
    /// target (unlike the automatic top-ups after a borrow, which send whole batches only; see
    /// ``LoaderConfiguration/numberOfAdvertisements``). Nothing is asked while the source is
    /// unreachable (a probe covers it).
    /// - Parameter count: 0 (the demand target alone) ... `maximumRetainedAdvertisements`.
    /// - Throws: ``LoaderError`` `.invalidArgument` for an empty ad unit, unknown loader or a
    ///   `count` out of range (field `count`), `.unavailable` for a disabled loader or after
    ///   shutdown, `.resourceExhausted` for a new ad unit when the loader already has
    ///   ``LoaderConfiguration/maximumPools`` pools.
    @discardableResult
    public func prefetch(
        adUnitID: String, loader: String = LoaderConfiguration.defaultName, count: Int = 0,
        privacy: PrivacySignals? = nil
    ) throws(LoaderError) -> PrefetchResult {
        let entry = try validated(adUnitID: adUnitID, loader: loader)
        let consentClass = try self.consentClass(of: privacy, in: entry)
        let maximum = entry.configuration.maximumRetainedAdvertisements
        if count < 0 || count > maximum {
            throw LoaderError(
                code: .invalidArgument, field: "count",
                message:
                    "must be 0...\(maximum) (loader \"\(entry.configuration.name)\" maximumRetainedAdvertisements), got \(count)"
            )
        }
        try requireEnabled(entry)
        let pool = try pool(for: entry, key: PoolKey(adUnitID: adUnitID, consentClass: consentClass))
        pool.prefetchArrived(count: count, at: now.unixMilliseconds)
        purgeExpired(pool)
        let requested = topUp(pool, trigger: .explicit, amount: .complete)
        return PrefetchResult(available: pool.available.count, inFlight: pool.inFlight, requested: requested)
    }

    /// Lends one valid ad, now or, when the caller may wait, once one can be lent.
    ///
    /// The answer is the return value: ``BorrowOutcome/answered(_:)`` when an ad is available,
    /// the slot already holds a lease, `wait` is zero, or no ad can come within the wait
    /// (``BorrowResult/upstreamFailed(_:)``: the source cannot be reached, or failed finally,
    /// and nothing is in flight); ``BorrowOutcome/parked(_:)`` when the
    /// borrow waits; ``BorrowOutcome/parkingRefused`` when it would have waited but `mayPark`
    /// is false. `whenServed` is called only for a parked borrow, exactly once, later (from a
    /// source completion or a scheduler action, never from inside this call), unless the
    /// handle is cancelled first.
    ///
    /// The ad lent is the available one that expires soonest among those with at least the
    /// minimum remaining life left; its lease ends at `leaseTimeout` from now or at the ad's
    /// expiry, whichever comes first. Every borrow, hit or miss,
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
    ///     (`reused: true`), renewed: its timeout moves to `leaseTimeout` from now, bounded by
    ///     the ad's expiry. If that lease's ad has less than the minimum remaining life left
    ///     (``LoaderConfiguration/minimumRemainingLife``), the lease ends, the ad is dropped as
    ///     expired and a fresh ad is lent. An empty string means no slot.
    ///   - wait: how long to park when the pool is empty; at most the loader's `maximumBorrowWait`.
    ///     Parked borrows are served in arrival order as ads arrive or come back. Checked
    ///     first, whatever `mayPark` is.
    ///   - mayPark: false when the caller cannot hold one more waiting borrow (its parked-borrow
    ///     limit): a borrow that would park answers ``BorrowOutcome/parkingRefused`` instead,
    ///     counted as a miss. A borrow that can be answered now is answered as usual.
    ///   - excluding: ads this borrow must not be lent (``AdExclusion``), e.g. creatives shown
    ///     nearby in a feed plan; nil (the default) costs nothing. A fresh lease takes the
    ///     soonest-expiring ad that passes; when none does, the borrow answers as for an empty
    ///     pool (or parks; served later, it answers ``BorrowResult/noAdYet`` if the ad that
    ///     came does not pass). A slot's own lease is kept whatever the exclusion says.
    ///   - whenServed: the later answer of a parked borrow.
    /// - Throws: ``LoaderError`` `.invalidArgument` (empty ad unit, unknown loader, wait too
    ///   long or negative: field `wait_ms`), `.unavailable` (disabled loader, after shutdown),
    ///   `.resourceExhausted` (a new ad unit when the loader already has
    ///   ``LoaderConfiguration/maximumPools`` pools).
    public func borrow(
        adUnitID: String, loader: String = LoaderConfiguration.defaultName, slot: String? = nil,
        wait: Duration = .zero, mayPark: Bool = true, excluding exclusion: AdExclusion? = nil,
        privacy: PrivacySignals? = nil,
        whenServed: @escaping (BorrowResult) -> Void
    ) throws(LoaderError) -> BorrowOutcome {
        let entry = try validated(adUnitID: adUnitID, loader: loader)
        let consentClass = try self.consentClass(of: privacy, in: entry)
        if wait < .zero || wait > entry.configuration.maximumBorrowWait {
            throw LoaderError(
                code: .invalidArgument, field: "wait_ms",
                message: "must be 0...\(entry.configuration.maximumBorrowWait.milliseconds) ms")
        }
        try requireEnabled(entry)
        let pool = try pool(for: entry, key: PoolKey(adUnitID: adUnitID, consentClass: consentClass))
        let nowMilliseconds = now.unixMilliseconds
        pool.demandArrived(at: nowMilliseconds)
        let slot = slot?.isEmpty == true ? nil : slot
        if let result = lend(from: pool, slot: slot, excluding: exclusion) {
            if case .leased(_, reused: false) = result { pool.freshLeaseLent(at: nowMilliseconds) }
            topUp(pool, trigger: .explicit)
            return .answered(result)
        }
        // A miss: the pool's next request is for a cell on screen (on-screen first).
        pool.borrowMissed(at: nowMilliseconds)
        if wait == .zero || !mayPark {
            pool.countMiss()
            topUp(pool, trigger: .explicit)
            return wait == .zero ? .answered(.noAdYet) : .parkingRefused
        }
        let handle = park(in: pool, slot: slot, exclusion: exclusion, wait: wait, whenServed: whenServed)
        topUp(pool, trigger: .explicit)
        if let error = failureWithNothingComing(pool), handle.take() != nil {
            // Fail fast: the source cannot be reached (nothing loads) and nothing is in flight.
            pool.parkedBorrowTimedOut()
            return .answered(.upstreamFailed(error))
        }
        return .parked(handle)
    }

    /// Ends a lease.
    ///
    /// Unshown, the ad goes back to the pool (or is counted expired). Shown, its `showCount`
    /// grows; at `showCountThreshold` it is consumed, else it goes back to the pool. A shown
    /// return tells the source (``DemandSource/adShown(_:device:)``) with `device`, the device
    /// the client names (its billing notice forwards it).
    /// An ad returned with less than the minimum remaining life left is dropped as expired
    /// (it could not be lent again).
    /// - Throws: ``LoaderError`` `.notFound` (field `lease_id`) when no lease `leaseID` is
    ///   open; the message says why: "already returned", "reclaimed by the lease timeout",
    ///   "ended by the loader", "has ended" (too long ago to say how: the loader remembers
    ///   the last 4,096 ended leases) or "was never lent"; `.unavailable` after shutdown.
    @discardableResult
    public func returnLease(
        _ leaseID: UInt64, shown: Bool, device: ImpressionDevice = ImpressionDevice()
    ) throws(LoaderError) -> ReturnOutcome {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        guard let handle = leases.handle(forID: leaseID, ids: ids) else {
            throw LoaderError(code: .notFound, field: "lease_id", message: notFoundMessage(leaseID))
        }
        return endLease(handle, .returned(shown: shown), device: device)
    }

    /// The NOT_FOUND message for a lease id without an open lease, naming why.
    func notFoundMessage(_ leaseID: UInt64) -> String {
        switch leases.endCause(of: leaseID, ids: ids) {
        case .returned: "lease \(leaseID) was already returned"
        case .reclaimed: "lease \(leaseID) was reclaimed by the lease timeout (or its ad's expiry)"
        case .dropped: "lease \(leaseID) was ended by the loader (its ad was dropped)"
        case .endedLongAgo: "lease \(leaseID) has ended (returned or reclaimed)"
        case .neverLent: "lease \(leaseID) was never lent"
        case .lentByReplica(let lender):
            "lease \(leaseID) was lent by replica \(lender), not this one (replica \(ids.replica))"
        }
    }

    /// The replica index every lease id of this loader carries in its top 12 bits (0, the
    /// default, outside a fleet), so that a replica given another's lease id names the lender
    /// (``returnLease(_:shown:)``'s NOT_FOUND "was lent by replica N"). Set it before the first
    /// lease is lent.
    public var leaseReplica: Int {
        get { ids.replica }
        set {
            precondition((0...IdentifierGenerator.maximumReplica).contains(newValue), "replica index out of range")
            precondition(leases.count == 0, "the replica index changes before any lease is lent")
            ids.replica = newValue
        }
    }

    /// The replica index a lease id names as its lender (0: no fleet).
    public static func lendingReplica(of leaseID: UInt64) -> Int { IdentifierGenerator.replica(of: leaseID) }

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
            for (key, pool) in entry.pools where adUnitID == nil || adUnitID == key.adUnitID {
                result.append(pool.currentStats(at: now))
            }
        }
        return result.sorted { ($0.loader, $0.adUnitID, $0.consentClass) < ($1.loader, $1.adUnitID, $1.consentClass) }
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
    /// its parked borrows with `.unavailable` and stops filling until enabled again. Either
    /// way a `loaderChanged` event says so (reason "disabled" or "enabled"); setting the
    /// state it already has does nothing. The state lasts until set again: a reload changes
    /// it only when the configuration's own `enabled` changes.
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
            pool.setEnabled(enabled)
            if !enabled { drain(pool, reason: .disabled) }
        }
        emitLoaderChanged(loader, enabled ? .enabled : .disabled)
    }

    /// Ends every parked borrow with `.unavailable`, cancels timers and stops loading; later
    /// calls throw `.unavailable`. Ads in flight are dropped when they arrive.
    ///
    /// Every retained ad is removed (reason "shutdown") and every open lease ends, so the
    /// counters still add up.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        feedTable.timer?.cancel()
        feedTable.timer = nil
        _ = feedTable.removeAll(loader: nil)
        leaseTimer?.cancel()
        leaseTimer = nil
        leaseTimerDeadline = nil
        for budget in budgets.values {
            budget.timer?.cancel()
            budget.timer = nil
            budget.waiting.removeAll()
        }
        let allPools = entries.keys.sorted().flatMap { sortedPools(of: entries[$0]!) }
        for pool in allPools {
            pool.setEnabled(false)
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
        if adUnitID.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "ad_unit_id", message: "must not be empty")
        }
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

    /// The consent class a call to `loader` with `privacy` lends from and buys for.
    /// - Throws: as ``borrow(adUnitID:loader:slot:wait:mayPark:privacy:whenServed:)`` for the
    ///   loader and the signals.
    public func consentClass(for privacy: PrivacySignals?, loader: String) throws(LoaderError) -> String {
        if isShutDown { throw LoaderError(code: .unavailable, message: "the loader is shut down") }
        guard let entry = entries[loader] else {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "unknown loader \"\(loader)\"")
        }
        return try consentClass(of: privacy, in: entry)
    }

    /// The consent class of a call to `entry` with `privacy` (nil: the loader's default class).
    /// - Throws: ``LoaderError`` `.failedPrecondition` when the signals allow no auction (the
    ///   message names the rule), `.invalidArgument` when they are malformed (a TCF string that
    ///   does not decode; field `privacy.tcf_consent`).
    func consentClass(of privacy: PrivacySignals?, in entry: Entry) throws(LoaderError) -> String {
        guard let privacy else { return entry.configuration.consent.defaultClass }
        let policy = entry.configuration.consent
        switch policy.classify(privacy) {
        case .consentClass(let index): return policy.classes[index].name
        case .refused(let rule, let message):
            throw LoaderError(
                code: .failedPrecondition, field: "privacy",
                message:
                    "consent: \(message) (rule loaders.\(entry.configuration.name).\(rule == "tcf" ? "consent" : rule))"
            )
        case .invalid(let field, let message):
            throw LoaderError(code: .invalidArgument, field: field, message: message)
        }
    }

    /// The pool of `key`, created if the loader is below its `maximumPools`.
    /// - Throws: ``LoaderError`` `.resourceExhausted` naming the limit when a new pool is needed
    ///   and the loader is at it.
    func pool(for entry: Entry, key: PoolKey) throws(LoaderError) -> AdPool {
        // As for loader names: the ad unit used last first, then the table.
        if let last = entry.lastPool, last.key == key { return last.pool }
        if let pool = entry.pools[key] {
            entry.lastPool = (key, pool)
            return pool
        }
        let adUnitID = key.adUnitID
        let name = entry.configuration.name
        let limit = entry.configuration.maximumPools
        if entry.pools.count >= limit {
            throw LoaderError(
                code: .resourceExhausted,
                message:
                    "pools: limit of \(limit) ad units reached for loader \"\(name)\" (loaders.\(name).maximumPools)")
        }
        let pool = AdPool(
            loader: entry.configuration.name, adUnitID: adUnitID, consentClass: key.consentClass,
            configuration: entry.configuration, source: entry.source, budget: budgets[entry.configuration.source],
            memory: memory, now: now)
        entry.pools[key] = pool
        entry.lastPool = (key, pool)
        scheduleRemovalCheck(pool, at: pool.removalCheckDeadline(notBefore: nil))
        return pool
    }

    /// Checks the pool for removal at `deadline` (``AdPool/removalCheckDeadline(notBefore:)``:
    /// once `poolRemovalTimeout` has passed since its last demand).
    func scheduleRemovalCheck(_ pool: AdPool, at deadline: AdInstant) {
        guard !isShutDown else { return }
        pool.removalCheckScheduled(
            scheduler.schedule(at: deadline) { [weak self, weak reference = pool.reference] in
                guard let self, let pool = reference?.pool else { return }
                pool.removalTimerFired()
                self.removeIfIdle(pool)
            })
    }

    /// Removes `pool` when it holds nothing and has had no demand for `poolRemovalTimeout`;
    /// else checks again when that may be so (``AdPool/removalCheck(at:)`` decides).
    ///
    /// Removal is safe because nothing refers to an empty pool but its loader: no lease
    /// (a lease would keep it alive anyway), no completion in flight, no parked borrow; its
    /// timers hold its ``AdPoolReference`` weakly and are cancelled; the loader's cache of the
    /// last pool is cleared.
    func removeIfIdle(_ pool: AdPool) {
        guard !isShutDown, let entry = entries[pool.loader], entry.pools[pool.key] === pool else { return }
        switch pool.removalCheck(at: now) {
        case .checkAgain(let deadline):
            scheduleRemovalCheck(pool, at: deadline)
            return
        case .remove:
            break
        }
        pool.cancelTimers()
        entry.pools[pool.key] = nil
        if entry.lastPool?.pool === pool { entry.lastPool = nil }
        emit(.poolRemoved, pool)
    }

    /// The error to fail a borrow with at once: the pool's source is unreachable or failed
    /// finally, nothing is in flight and nothing can be lent, so no ad can arrive in time
    /// (``AdPool/failureWithNothingComing``).
    func failureWithNothingComing(_ pool: AdPool) -> UpstreamError? { pool.failureWithNothingComing }

    func sortedPools(of entry: Entry) -> [AdPool] {
        entry.pools.keys.sorted().map { entry.pools[$0]! }
    }

    /// Drops a pool's available ads, marks its leased ads for removal, ends its parked
    /// borrows with `.unavailable` and stops its timers and retries.
    func drain(_ pool: AdPool, reason: AdDropReason) {
        let drained = pool.drain(reason: reason)
        for ad in drained.ads { reportDropped(ad, from: pool, reason: reason) }
        for parked in drained.parked { parked.take()?(.unavailable) }
    }

    /// Reports an ad that left `pool` for good, already counted (``AdPool/countDropped(_:)``):
    /// an `expired` event, or a `removed` event with the reason (and `note`, the client's
    /// reason for an invalidation); then, for an ad never shown,
    /// the source's ``DemandSource/adDropped(_:reason:)`` notice.
    func reportDropped(_ ad: Ad, from pool: AdPool, reason: AdDropReason, note: String? = nil) {
        if reason == .expired {
            emit(.expired, pool) { $0.adID = ad.id }
        } else {
            emit(.removed, pool) {
                $0.adID = ad.id
                $0.reason = AdEvent.Reason(reason)
                $0.note = note
            }
        }
        // A suspended ad is kept by the pool store, not lost: no loss notice.
        if ad.showCount == 0 && !(reason == .shutdown && suspendedAdIDs.contains(ad.id)) {
            pool.source.adDropped(ad, reason: reason)
        }
        onAdRetired?(ad)
    }

    /// Delivers a `loaderChanged` event for `loader` (no ad unit).
    func emitLoaderChanged(_ loader: String, _ reason: AdEvent.Reason) {
        guard !observers.isEmpty else { return }
        var event = AdEvent(kind: .loaderChanged, at: now, loader: loader, adUnitID: "")
        event.reason = reason
        for observer in observers { observer.callback(event) }
    }

    /// Builds an event for `pool`, lets `configure` fill it in, and delivers it.
    func emit(_ kind: AdEvent.Kind, _ pool: AdPool, _ configure: (inout AdEvent) -> Void = { _ in }) {
        guard !observers.isEmpty else { return }
        var event = AdEvent(kind: kind, at: now, loader: pool.loader, adUnitID: pool.adUnitID)
        event.consentClass = pool.key.consentClass
        configure(&event)
        for observer in observers { observer.callback(event) }
    }
}
