/// The ads of one (loader, ad unit): available ads in expiry order, leased ads, the slots
/// holding leases, parked borrows, the fill state and the pool's counters.
///
/// A pool only keeps state; the loader decides when to load, lend, expire and emit events.
/// Ads live in a ``Slab`` so that heaps and leases refer to them by an ``AdHandle``, and a
/// retained ad costs its record plus one heap entry.
///
/// - Important: loop-confined like its loader.
final class AdPool {
    /// Where an ad is: each record is in exactly one state, and only available ads are in the
    /// expiry heap.
    enum AdState: Equatable {
        /// In the expiry heap, ready to lend.
        case available
        /// Lent under the lease.
        case leased(LeaseHandle)
        /// Lent under the lease, and dropped by the loader meanwhile (disabled, shutdown): it
        /// is removed for `reason` when the lease ends, never lent again.
        case leasedPendingDrop(LeaseHandle, reason: AdDropReason)
    }

    /// One loaded ad and where it is.
    struct Record {
        var ad: Ad
        /// Breaks expiry ties: the ad loaded first is lent first.
        var sequence: UInt64
        var state: AdState
    }

    let loader: String
    let adUnitID: String
    /// The ad unit and consent class: the pool's key in its loader's table.
    let key: PoolKey
    /// Replaced by ``reconfigure(_:)`` (a reload that keeps the pool).
    @exclusivity(unchecked) private(set) var configuration: LoaderConfiguration
    let source: any DemandSource
    /// The source's request-rate budget, shared with the other pools of that source; nil: none.
    let budget: SourceRequestBudget?
    /// The loader-wide memory budget this pool's ads count against.
    let memory: AdMemoryBudget
    let request: AdRequest
    /// `configuration.leaseTimeout` in milliseconds, computed once: `Duration`'s 128-bit
    /// arithmetic cost ~190 instructions per Borrow (callgrind).
    @exclusivity(unchecked) private(set) var leaseTimeoutMilliseconds: Int64
    /// `configuration.effectiveMinimumRemainingLife` in milliseconds: an ad is lendable while
    /// `now + minimumLifeMilliseconds < expiresAt`.
    @exclusivity(unchecked) private(set) var minimumLifeMilliseconds: Int64
    /// How long an ad stays lendable once loaded: its life (the shortest seen when the
    /// minimum follows the ads' life) minus the minimum remaining life.
    @exclusivity(unchecked) private(set) var lendableMilliseconds: Int64
    /// Set when a reload removed the pool's loader or changed it so that its ads cannot stay:
    /// the pool is drained, out of its loader's table, and kept only until its leases end.
    @exclusivity(unchecked) var isRetired = false

    /// Whether the pool loads and lends; mirrors its loader's enabled flag.
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) var enabled: Bool
    @exclusivity(unchecked) var stats: PoolStats
    @exclusivity(unchecked) var inFlight = 0
    /// Upstream requests sent and not answered yet (at most `maximumConcurrentRequests`).
    @exclusivity(unchecked) var requestsInFlight = 0
    /// Whether the last top-up wanted more requests than the concurrency limit (the pool's
    /// demand-derived in-flight target or its ceiling) let it send.
    @exclusivity(unchecked) var heldBackByCap = false
    /// The configured cap holding the pool below what its demand asks for, if any (see
    /// ``HoldBack``); nil: nothing binds.
    @exclusivity(unchecked) var heldBack: HoldBack?
    /// Since when ``heldBack`` is set, Unix milliseconds.
    @exclusivity(unchecked) var heldBackSince: Int64 = 0
    /// Time spent held back before the current spell, milliseconds.
    @exclusivity(unchecked) var heldBackMilliseconds: Int64 = 0
    /// After a failed request, no request goes upstream on any path before the retry delay
    /// has passed (Unix milliseconds); a successful answer ends it (the source answers again).
    @exclusivity(unchecked) var backoffUntil: Int64 = 0
    /// The source's `Retry-After`: no request on any path before it, whatever answers meanwhile.
    @exclusivity(unchecked) var retryAfterUntil: Int64 = 0
    /// No request goes upstream, on any path, before this (Unix milliseconds).
    var notBefore: Int64 { max(backoffUntil, retryAfterUntil) }
    /// A borrow missed (answered no ad, was refused parking, or parked) and no request was
    /// sent since: the pool has on-screen demand (see ``hasOnScreenDemand``).
    @exclusivity(unchecked) var onScreenMiss = false
    /// The top-up waiting in the source's budget queue, if any (at most one per pool).
    @exclusivity(unchecked) var budgetWait: BudgetWait?
    /// What the pool tops up to (loaded plus in flight): `maximumRetainedAdvertisements` for
    /// fixed sizing, else refreshed from ``demand`` before each top-up.
    @exclusivity(unchecked) var target: Int
    /// The measured demand (demand sizing).
    @exclusivity(unchecked) var demand: DemandEstimate
    /// Ads a Prefetch said the caller will want soon and not yet borrowed: demand sizing
    /// keeps at least this many beyond the leased ones (``refreshTarget(at:)``); each fresh
    /// lease takes one off, a later Prefetch replaces it.
    @exclusivity(unchecked) var prefetchWanted = 0
    /// Requests the pool's demand asks to keep in flight (``DemandEstimate/inFlightTarget(at:batch:)``),
    /// as of the last top-up.
    @exclusivity(unchecked) var inFlightTarget = 2
    /// When a borrow or prefetch last named this pool, Unix milliseconds.
    @exclusivity(unchecked) var lastDemandAt: Int64
    /// The error of the last failed upstream request, for borrows that fail fast.
    @exclusivity(unchecked) var lastError: UpstreamError?
    @exclusivity(unchecked) var fill: FillStateMachine
    @exclusivity(unchecked) var parked = ParkedBorrowQueue()
    /// slot -> lease handle in the loader's ``LeaseTable``.
    @exclusivity(unchecked) var slots: [String: LeaseHandle] = [:]

    @exclusivity(unchecked) var sweepTimer: (any ScheduledTask)?
    /// Whether `sweepTimer` is due now, continuing a sweep that hit its per-callback limit.
    @exclusivity(unchecked) var sweepIsContinuation = false
    @exclusivity(unchecked) var retryTimer: (any ScheduledTask)?
    @exclusivity(unchecked) var probeTimer: (any ScheduledTask)?
    /// Checks, once the pool may have been idle long enough, whether it can be removed.
    @exclusivity(unchecked) var removalTimer: (any ScheduledTask)?

    @exclusivity(unchecked) private var records = Slab<AdHandle, Record>()
    /// Available ads by expiry: the soonest to expire is lent first and swept first.
    @exclusivity(unchecked) private(set) var available = DeadlineHeap<AdHandle>()
    @exclusivity(unchecked) private(set) var leasedCount = 0
    /// What closures hold weakly instead of the pool (see ``AdPoolReference``).
    private(set) lazy var reference = AdPoolReference(self)

    init(
        loader: String, adUnitID: String, consentClass: String? = nil, configuration: LoaderConfiguration,
        source: any DemandSource, budget: SourceRequestBudget? = nil, memory: AdMemoryBudget = AdMemoryBudget(),
        now: AdInstant
    ) {
        self.memory = memory
        self.loader = loader
        self.adUnitID = adUnitID
        self.configuration = configuration
        self.source = source
        self.budget = budget
        let request = configuration.request(adUnitID: adUnitID, consentClass: consentClass)
        self.request = request
        self.key = PoolKey(adUnitID: adUnitID, consentClass: request.consentClass)
        self.leaseTimeoutMilliseconds = configuration.leaseTimeout.milliseconds
        self.minimumLifeMilliseconds = configuration.effectiveMinimumRemainingLife.milliseconds
        self.lendableMilliseconds =
            configuration.lifetime.milliseconds - configuration.effectiveMinimumRemainingLife.milliseconds
        self.target = configuration.sizing == .fixed ? configuration.maximumRetainedAdvertisements : 0
        self.demand = DemandEstimate(now: now.unixMilliseconds)
        self.lastDemandAt = now.unixMilliseconds
        self.enabled = configuration.enabled
        self.stats = PoolStats(loader: loader, adUnitID: adUnitID, consentClass: request.consentClass)
        self.fill = FillStateMachine(maximumRetries: configuration.retry.maximumCount)
    }

    /// Takes a reloaded configuration that keeps the pool (``LoaderConfiguration/keepsPools(under:)``):
    /// sizing, caps, timeouts, lifetime and retry settings apply from now on; ads and leases
    /// already there keep their expiry and lease end. `enabled` is left as it is.
    func reconfigure(_ configuration: LoaderConfiguration) {
        assert(self.configuration.keepsPools(under: configuration), "a reload that cannot keep the pool")
        var configuration = configuration
        configuration.enabled = enabled
        self.configuration = configuration
        leaseTimeoutMilliseconds = configuration.leaseTimeout.milliseconds
        minimumLifeMilliseconds = configuration.effectiveMinimumRemainingLife.milliseconds
        lendableMilliseconds = configuration.lifetime.milliseconds - minimumLifeMilliseconds
        if configuration.sizing == .fixed { target = configuration.maximumRetainedAdvertisements }
        fill.maximumRetries = configuration.retry.maximumCount
    }

    /// Follows the real life of an arriving ad (`lifeMilliseconds` from load to expiry) when
    /// the minimum remaining life is the default: a quarter of the shortest life seen, so
    /// bids that live shorter than `lifetime` are lent, not dropped on arrival.
    func noteAdLife(_ lifeMilliseconds: Int64) {
        guard configuration.followsAdLife, lifeMilliseconds > 0 else { return }
        let quarter = lifeMilliseconds / 4
        guard quarter < minimumLifeMilliseconds else { return }
        minimumLifeMilliseconds = quarter
        lendableMilliseconds = lifeMilliseconds - quarter
    }

    /// The most requests the pool may have in flight now: its demand's in-flight target
    /// (demand sizing) within the configured ceiling. A Prefetch's count is demand the caller
    /// announced: the requests it needs at once count as demand too.
    var requestLimit: Int {
        let ceiling = configuration.maximumConcurrentRequests
        guard configuration.sizing == .demand else { return ceiling }
        let batch = configuration.numberOfAdvertisements
        return min(ceiling, max(inFlightTarget, (prefetchWanted + batch - 1) / batch))
    }

    /// Refreshes ``inFlightTarget`` from the measured demand (demand sizing; fixed pools
    /// demand their ceiling).
    func refreshInFlightTarget(at now: AdInstant) {
        guard configuration.sizing == .demand else {
            inFlightTarget = configuration.maximumConcurrentRequests
            return
        }
        inFlightTarget = demand.inFlightTarget(at: now.unixMilliseconds, batch: configuration.numberOfAdvertisements)
    }

    /// Time held back so far, including a spell under way.
    func heldBackTotal(at now: Int64) -> Int64 {
        heldBackMilliseconds + (heldBack == nil ? 0 : max(0, now - heldBackSince))
    }

    /// Ads held (available or leased) plus ads asked for and not yet answered.
    var loadedAndInFlight: Int { available.count + leasedCount + inFlight }

    /// Ads a top-up would ask for now (up to ``target``, refreshed by ``refreshTarget(at:)``).
    var missing: Int { max(0, target - loadedAndInFlight) }

    /// Whether `now` is at least `idleTimeout` after the last borrow or prefetch.
    func isIdle(at now: AdInstant) -> Bool {
        now.unixMilliseconds - lastDemandAt >= configuration.idleTimeout.milliseconds
    }

    /// Whether an on-screen borrow waits for this pool's next request: one missed since the
    /// last request was sent, or more borrows are parked than ads are in flight. Such a pool's
    /// top-up goes before background refills when the concurrency cap or the source's budget
    /// is short.
    var hasOnScreenDemand: Bool { onScreenMiss || parked.count > inFlight }

    /// Whether the pool holds nothing: no ad available, leased or in flight, no borrow parked.
    var isEmpty: Bool { available.isEmpty && leasedCount == 0 && inFlight == 0 && parked.isEmpty }

    /// Recomputes ``target`` for demand sizing (fixed sizing keeps the maximum): leased ads
    /// plus the stock ``DemandEstimate`` asks for, or the ads a Prefetch said will be wanted
    /// (``prefetchWanted``) if more, capped by the memory bound.
    func refreshTarget(at now: AdInstant) {
        guard configuration.sizing == .demand else { return }
        let stock = demand.stock(
            at: now.unixMilliseconds, batch: configuration.numberOfAdvertisements, parked: parked.count,
            lendableMilliseconds: lendableMilliseconds, coverMilliseconds: configuration.stockCover.milliseconds)
        target = min(configuration.poolBound, leasedCount + max(stock, prefetchWanted))
    }

    /// The record of a live handle. Mutations through it edit the record in place (no copy
    /// of the ad and its strings).
    subscript(handle: AdHandle) -> Record {
        get { records[handle] }
        _modify { yield &records[handle] }
    }

    /// Stores a freshly loaded ad as available.
    @discardableResult
    func insertAvailable(_ ad: Ad, sequence: UInt64) -> AdHandle {
        memory.held += 1
        let handle = records.insert(Record(ad: ad, sequence: sequence, state: .available))
        available.insert(handle: handle, deadline: ad.expiresAt.unixMilliseconds, sequence: sequence)
        return handle
    }

    /// Calls `body` with every record (available or leased) and its handle, in slot order.
    func forEachRecord(_ body: (AdHandle, Record) -> Void) { records.forEachLive(body) }

    /// The available ad that expires soonest, without taking it.
    var soonestAvailable: (handle: AdHandle, expiresAt: AdInstant)? {
        available.first.map { ($0.handle, AdInstant(unixMilliseconds: $0.deadline)) }
    }

    /// The available ad that expires soonest among those expiring after `limit` (Unix ms) that
    /// `exclusion` lets through (ties: the ad loaded first). O(available): only borrows with an
    /// exclusion come here.
    func soonestAvailable(after limit: Int64, passing exclusion: AdExclusion) -> AdHandle? {
        var best: DeadlineHeap<AdHandle>.Entry?
        for entry in available.unorderedEntries where entry.deadline > limit {
            if let current = best, (current.deadline, current.sequence) <= (entry.deadline, entry.sequence) { continue }
            if exclusion.excludes(records[entry.handle].ad) { continue }
            best = entry
        }
        return best?.handle
    }

    /// Takes an available ad out of the heap and marks it leased under `lease`.
    func lease(_ handle: AdHandle, to lease: LeaseHandle) {
        assert(records[handle].state == .available, "lending an ad that is not available")
        available.remove(handle: handle)
        records[handle].state = .leased(lease)
        leasedCount += 1
    }

    /// Marks a leased ad to be removed for `reason` when its lease ends.
    func markPendingDrop(_ handle: AdHandle, reason: AdDropReason) {
        switch records[handle].state {
        case .leased(let lease), .leasedPendingDrop(let lease, _):
            records[handle].state = .leasedPendingDrop(lease, reason: reason)
        case .available:
            assertionFailure("marking an available ad for drop")
        }
    }

    /// Puts a leased ad back among the available ones (its lease ended).
    func makeAvailable(_ handle: AdHandle) {
        assert(records[handle].state != .available, "returning an ad that is available")
        leasedCount -= 1
        records[handle].state = .available
        let record = records[handle]
        available.insert(handle: handle, deadline: record.ad.expiresAt.unixMilliseconds, sequence: record.sequence)
    }

    /// Frees the record of an ad, available or leased (its lease ended), and returns the ad.
    @discardableResult
    func discard(_ handle: AdHandle) -> Ad {
        let record = records.remove(handle)
        memory.held -= 1
        if record.state == .available {
            available.remove(handle: handle)
        } else {
            leasedCount -= 1
        }
        return record.ad
    }

    /// Handles of every available ad, in a deterministic order.
    var availableHandles: [AdHandle] { available.unorderedEntries.map(\.handle) }

    /// Counts an ad that left the pool for `reason` in the counter the reason belongs to.
    func countDropped(_ reason: AdDropReason) {
        switch reason {
        case .expired: stats.expired += 1
        case .consumed: stats.consumed += 1
        case .disabled, .shutdown, .invalidated, .reconfigured: stats.removed += 1
        case .memoryBudget:
            stats.removed += 1
            stats.droppedForMemory += 1
        }
    }

    /// Gauges refreshed from the live state.
    var currentStats: PoolStats {
        var stats = self.stats
        stats.available = available.count
        stats.leased = leasedCount
        stats.inFlight = inFlight
        stats.parkedBorrows = parked.count
        stats.requestsInFlight = requestsInFlight
        stats.target = target
        stats.inFlightTarget = inFlightTarget
        stats.heldBack = heldBack
        stats.roundTripMilliseconds = demand.latency
        stats.adsPerRequest = demand.adsPerRequest ?? 0
        stats.minimumRemainingLifeMilliseconds = minimumLifeMilliseconds
        return stats
    }

    func cancelTimers() {
        sweepTimer?.cancel()
        sweepTimer = nil
        sweepIsContinuation = false
        retryTimer?.cancel()
        retryTimer = nil
        probeTimer?.cancel()
        probeTimer = nil
        removalTimer?.cancel()
        removalTimer = nil
    }
}
