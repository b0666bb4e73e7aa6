/// The ads of one (loader, ad unit): available ads in expiry order, leased ads, the slots
/// holding leases, parked borrows, the fill state and the pool's counters.
///
/// A pool is a state machine: its stored properties are `private(set)`, so outside this file
/// its state changes only through its events (the extension at the end of this file, as far
/// as `private(set)` reaches), each returning what the loader carries out beyond the pool.
/// The pool decides: whether it loads at all (``loads(isShutDown:)``), what a top-up, probe or
/// retry sends and when, which ads expire, when its sweep and removal check are due, which
/// parked borrow is served, whether its budget turn or an eviction applies to it. The loader
/// only executes the returned actions (schedules timers, calls the source, lends, emits
/// events) and applies what is daemon-wide (the memory and request budgets, the lease
/// table); the pool never calls a source, a timer or an observer.
///
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
    /// `configuration.stockCover` in milliseconds, computed once (as ``leaseTimeoutMilliseconds``:
    /// its `Duration` conversion in ``refreshTarget(at:)`` was ~190 instructions per Borrow).
    @exclusivity(unchecked) private(set) var stockCoverMilliseconds: Int64
    /// Set when a reload removed the pool's loader or changed it so that its ads cannot stay:
    /// the pool is drained, out of its loader's table, and kept only until its leases end.
    @exclusivity(unchecked) private(set) var isRetired = false

    /// Whether the pool loads and lends; mirrors its loader's enabled flag.
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) private(set) var enabled: Bool
    @exclusivity(unchecked) private(set) var stats: PoolStats
    /// What the pool store gave back to this pool at the start (ads, leases, expired ads,
    /// when), nil for a pool the start did not restore: a Watch's `restored` event.
    private(set) var restoration: (ads: Int, restoration: AdEvent.Restoration, at: AdInstant)?
    @exclusivity(unchecked) private(set) var inFlight = 0
    /// Upstream requests sent and not answered yet (at most `maximumConcurrentRequests`).
    @exclusivity(unchecked) private(set) var requestsInFlight = 0
    /// Whether the last top-up wanted more requests than the concurrency limit (the pool's
    /// demand-derived in-flight target or its ceiling) let it send.
    @exclusivity(unchecked) private(set) var heldBackByCap = false
    /// The configured cap holding the pool below what its demand asks for, if any (see
    /// ``HoldBack``); nil: nothing binds.
    @exclusivity(unchecked) private(set) var heldBack: HoldBack?
    /// Since when ``heldBack`` is set, Unix milliseconds.
    @exclusivity(unchecked) private(set) var heldBackSince: Int64 = 0
    /// Time spent held back before the current spell, milliseconds.
    @exclusivity(unchecked) private(set) var heldBackMilliseconds: Int64 = 0
    /// After a failed request, no request goes upstream on any path before the retry delay
    /// has passed (Unix milliseconds); a successful answer ends it (the source answers again).
    @exclusivity(unchecked) private(set) var backoffUntil: Int64 = 0
    /// The source's `Retry-After`: no request on any path before it, whatever answers meanwhile.
    @exclusivity(unchecked) private(set) var retryAfterUntil: Int64 = 0
    /// No request goes upstream, on any path, before this (Unix milliseconds).
    var notBefore: Int64 { max(backoffUntil, retryAfterUntil) }
    /// A borrow missed (answered no ad, was refused parking, or parked) and no request was
    /// sent since: the pool has on-screen demand (see ``hasOnScreenDemand``).
    @exclusivity(unchecked) private(set) var onScreenMiss = false
    /// The top-up waiting in the source's budget queue, if any (at most one per pool).
    @exclusivity(unchecked) private(set) var budgetWait: BudgetWait?
    /// What the pool tops up to (loaded plus in flight): `maximumRetainedAdvertisements` for
    /// fixed sizing, else refreshed from ``demand`` before each top-up.
    @exclusivity(unchecked) private(set) var target: Int
    /// The measured demand (demand sizing).
    @exclusivity(unchecked) private(set) var demand: DemandEstimate
    /// Ads a Prefetch said the caller will want soon and not yet borrowed: demand sizing
    /// keeps at least this many beyond the leased ones (``refreshTarget(at:)``); each fresh
    /// lease takes one off, a later Prefetch replaces it.
    @exclusivity(unchecked) private(set) var prefetchWanted = 0
    /// Requests the pool's demand asks to keep in flight (``DemandEstimate/inFlightTarget(at:batch:)``),
    /// as of the last top-up.
    @exclusivity(unchecked) private(set) var inFlightTarget = 2
    /// When a borrow or prefetch last named this pool, Unix milliseconds.
    @exclusivity(unchecked) private(set) var lastDemandAt: Int64
    /// The error of the last failed upstream request, for borrows that fail fast.
    @exclusivity(unchecked) private(set) var lastError: UpstreamError?
    @exclusivity(unchecked) private(set) var fill: FillStateMachine
    @exclusivity(unchecked) private(set) var parked = ParkedBorrowQueue()
    /// slot -> lease handle in the loader's ``LeaseTable``.
    @exclusivity(unchecked) private(set) var slots: [String: LeaseHandle] = [:]

    @exclusivity(unchecked) private(set) var sweepTimer: (any ScheduledTask)?
    /// Whether `sweepTimer` is due now, continuing a sweep that hit its per-callback limit.
    @exclusivity(unchecked) private(set) var sweepIsContinuation = false
    @exclusivity(unchecked) private(set) var retryTimer: (any ScheduledTask)?
    @exclusivity(unchecked) private(set) var probeTimer: (any ScheduledTask)?
    /// Checks, once the pool may have been idle long enough, whether it can be removed.
    @exclusivity(unchecked) private(set) var removalTimer: (any ScheduledTask)?

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
        self.stockCoverMilliseconds = configuration.stockCover.milliseconds
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
        stockCoverMilliseconds = configuration.stockCover.milliseconds
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

    /// Whether the pool loads and lends: enabled, and its loader not shut down. Every event
    /// that could send a request or schedule a fill timer answers nothing otherwise.
    @inline(__always)
    func loads(isShutDown: Bool) -> Bool { enabled && !isShutDown }

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
            lendableMilliseconds: lendableMilliseconds, coverMilliseconds: stockCoverMilliseconds)
        target = min(configuration.poolBound, leasedCount + max(stock, prefetchWanted))
    }

    /// The record of a live handle (read only: the pool's events change records).
    subscript(handle: AdHandle) -> Record { records[handle] }

    /// Counts a show of the leased ad `handle` (edits the record in place).
    func noteShown(_ handle: AdHandle) {
        records[handle].ad.showCount += 1
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
    private func lease(_ handle: AdHandle, to lease: LeaseHandle) {
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
    private func makeAvailable(_ handle: AdHandle) {
        assert(records[handle].state != .available, "returning an ad that is available")
        leasedCount -= 1
        records[handle].state = .available
        let record = records[handle]
        available.insert(handle: handle, deadline: record.ad.expiresAt.unixMilliseconds, sequence: record.sequence)
    }

    /// Frees the record of an ad, available or leased (its lease ended), and returns the ad.
    @discardableResult
    private func discard(_ handle: AdHandle) -> Ad {
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

    /// The counters with the gauges refreshed from the live state at `now`.
    func currentStats(at now: AdInstant) -> PoolStats {
        var stats = self.stats
        stats.idle = isIdle(at: now)
        stats.heldBackMilliseconds = UInt64(max(0, heldBackTotal(at: now.unixMilliseconds)))
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

/// The pool's events: the only way its state changes from outside this file (its stored
/// properties are `private(set)`, so the compiler holds the loader to these methods).
///
/// Each method takes one event (a borrow arrived, a fill answered, a lease ended, a timer
/// fired, ...), settles the pool's own state, and returns what the loader has to carry out
/// beyond the pool: a fill action (``FillStateMachine/Action``), the ad a lease end settled
/// and whether it is dropped (``LeaseSettlement``), the ads and parked borrows a drain let go
/// (``Drained``), whether a hold-back changed. The loader executes those (timers, the source,
/// events, notices, parked borrows' callbacks); the pool never calls out.
extension AdPool {
    // MARK: Demand

    /// A borrow or a feed plan named the pool at `now` (Unix ms): it is not idle.
    func demandArrived(at now: Int64) {
        lastDemandAt = now
    }

    /// A Prefetch named the pool at `now`, announcing `count` ads the caller will want soon.
    func prefetchArrived(count: Int, at now: Int64) {
        prefetchWanted = count
        lastDemandAt = now
    }

    /// A fresh lease was lent at `now` to a borrow or a feed position: one borrow of demand,
    /// and one ad a Prefetch announced is taken. `countsBorrow` false: the demand was counted
    /// already (a planned position counts when first planned).
    func freshLeaseLent(at now: Int64, countsBorrow: Bool = true) {
        if countsBorrow { demand.noteBorrow(at: now) }
        if prefetchWanted > 0 { prefetchWanted -= 1 }
    }

    /// A borrow found nothing to lend at `now`: demand, and the pool's next request is for a
    /// cell on screen (on-screen first, ``hasOnScreenDemand``).
    func borrowMissed(at now: Int64) {
        demand.noteBorrow(at: now)
        onScreenMiss = true
    }

    /// A planned position will be asked for at `now`.
    func positionPlanned(at now: Int64) {
        demand.noteBorrow(at: now)
    }

    /// A visible feed position stays empty: a miss, and on-screen demand.
    func positionMissed() {
        stats.borrowMisses += 1
        onScreenMiss = true
    }

    /// The feed planner held positions back by its rules: keep at least `wanted` ads (within
    /// `maximum`) so that more come beyond the ones the rules exclude.
    func wantsAtLeast(_ wanted: Int, maximum: Int) {
        prefetchWanted = min(maximum, max(prefetchWanted, wanted))
    }

    /// A borrow answered with no ad (not parked, or parked and then failed or timed out).
    func countMiss() {
        stats.borrowMisses += 1
    }

    // MARK: Lending

    /// A borrow renewed the lease its slot holds.
    func countHit() {
        stats.borrowHits += 1
    }

    /// Lends the available ad `handle` under `lease` for `slot` (nil: none) and counts the hit.
    func lend(_ handle: AdHandle, to lease: LeaseHandle, slot: String?) {
        self.lease(handle, to: lease)
        if let slot { slots[slot] = lease }
        stats.borrowHits += 1
    }

    /// Reopens a restored lease of the ad `handle` (inserted available just before): leased,
    /// and holding `slot` unless that slot holds another lease by now. Counts no hit.
    func reopen(_ handle: AdHandle, to lease: LeaseHandle, slot: String?) {
        self.lease(handle, to: lease)
        if let slot, slots[slot] == nil { slots[slot] = lease }
    }

    /// What ending a lease did to its ad.
    struct LeaseSettlement {
        /// The ad as it was when the lease ended (its show counted).
        var ad: Ad
        /// Why the ad left the pool (counted already), nil: it is available again.
        var drop: AdDropReason?
    }

    /// The lease `lease` of the ad `handle` for `slot` ended at `now` (Unix ms), `shown` or
    /// not: the slot is freed, a show counted, and the ad settled: dropped (consumed at the
    /// show threshold, expired when it could not be lent again, or the reason it was marked
    /// with while leased; counted) or available again.
    func leaseEnded(_ handle: AdHandle, lease: LeaseHandle, slot: String?, shown: Bool, at now: Int64)
        -> LeaseSettlement
    {
        if let slot, slots[slot] == lease { slots[slot] = nil }
        if shown { noteShown(handle) }
        let record = self[handle]
        let drop: AdDropReason?
        switch record.state {
        case .leasedPendingDrop(let held, let reason):
            assert(held == lease, "ad leased under another lease")
            drop = reason
        case .leased(let held):
            assert(held == lease, "ad leased under another lease")
            if shown && record.ad.showCount >= configuration.showCountThreshold {
                drop = .consumed
            } else if !isLendable(expiresAt: record.ad.expiresAt, at: now) {
                // Less than the minimum remaining life left: it could not be lent again.
                drop = .expired
            } else {
                drop = nil
            }
        case .available:
            preconditionFailure("a lease held an available ad")
        }
        if let drop {
            discard(handle)
            countDropped(drop)
        } else {
            makeAvailable(handle)
        }
        return LeaseSettlement(ad: record.ad, drop: drop)
    }

    /// The lease timeout (or its ad's expiry) ended one of the pool's leases.
    func countReclaim() {
        stats.leasesReclaimed += 1
    }

    /// Whether an ad expiring at `expiresAt` has at least the minimum remaining life left at
    /// `now` (Unix ms).
    @inline(__always)
    func isLendable(expiresAt: AdInstant, at now: Int64) -> Bool {
        now &+ minimumLifeMilliseconds < expiresAt.unixMilliseconds
    }

    // MARK: Parked borrows

    /// A borrow parks, waiting for an ad.
    func park(_ handle: ParkedBorrowHandle) {
        parked.append(handle)
    }

    /// The oldest parked borrow still waiting, left in the queue, while the pool lends (none
    /// once it is disabled): the next one serving parked borrows looks at.
    func parkedBorrowToServe() -> ParkedBorrowHandle? {
        enabled ? parked.first() : nil
    }

    /// Event: serving parked borrows at `now` (Unix ms) looked at the oldest one; its slot
    /// holds a lease still lendable to it or not (`slotHoldsValidLease`, the loader's lease
    /// table knows). When one of those or an available ad can serve it, the oldest waiting
    /// borrow is taken out of the queue and true returned (the loader lends to it); else it
    /// stays parked and serving stops.
    func takeParkedBorrowIfServable(slotHoldsValidLease: Bool, at now: Int64) -> Bool {
        guard slotHoldsValidLease || hasLendableAd(at: now) else { return false }
        _ = parked.removeFirst()
        return true
    }

    /// A parked borrow was cancelled by its caller (it stays a dead entry in the queue).
    func parkedBorrowWithdrawn() {
        parked.noteWithdrawn()
    }

    /// A parked borrow's wait passed: withdrawn, and a miss.
    func parkedBorrowTimedOut() {
        parked.noteWithdrawn()
        stats.borrowMisses += 1
    }

    /// Takes every parked borrow still waiting out of the queue, oldest first (they fail:
    /// nothing can come for them).
    func takeAllParked() -> [ParkedBorrowHandle] {
        parked.removeAll()
    }

    // MARK: Upstream requests

    /// One upstream request for `count` ads was sent: they count as in flight (and against
    /// the memory budget) until the source answers.
    func requestSent(count: Int) {
        onScreenMiss = false
        inFlight += count
        memory.held += count
        requestsInFlight += 1
        stats.upstreamRequests += 1
    }

    /// The source answered a request for `asked` ads (ads or a failure): no longer in flight.
    func requestAnswered(asked: Int) {
        inFlight -= asked
        memory.held -= asked
        requestsInFlight -= 1
    }

    /// An ad arrived whose life is `lifeMilliseconds` from load to expiry (or was restored).
    func adArrived(lifeMilliseconds: Int64) {
        stats.loaded += 1
        noteAdLife(lifeMilliseconds)
    }

    /// Event: an ad expiring at `expiresAt` arrived at `now` (Unix ms; counted already by
    /// ``adArrived(lifeMilliseconds:)``). Returns why it is dropped, nil to store it: the
    /// loader is shut down, the pool no longer loads (its loader disabled, or the pool retired
    /// by a reload), the creative is `invalid` (it does not fit the format, or a client's
    /// invalidation blocks it: evaluated only if the pool still loads), or it arrived with
    /// less than the minimum remaining life left (counted as expired on arrival).
    func arrivalDrop(
        expiresAt: AdInstant, at now: Int64, isShutDown: Bool, invalid: @autoclosure () -> Bool
    ) -> AdDropReason? {
        if isShutDown { return .shutdown }
        if !enabled { return isRetired ? .reconfigured : .disabled }
        if invalid() { return .invalidated }
        guard isLendable(expiresAt: expiresAt, at: now) else {
            stats.expiredOnArrival += 1
            return .expired
        }
        return nil
    }

    /// A request for `asked` ads, sent `latencyMilliseconds` ago, was answered with `accepted`
    /// ads (stored already): the demand estimate learns, the last error and the failure
    /// backoff end (the source answers again; a `Retry-After` still holds).
    /// - Returns: whether the pool still loads (``loads(isShutDown:)``); if not, the answer
    ///   changes nothing more and the loader stops there.
    func fillAnswered(asked: Int, accepted: Int, latencyMilliseconds: Int64, isShutDown: Bool) -> Bool {
        guard loads(isShutDown: isShutDown) else { return false }
        demand.noteLatency(milliseconds: latencyMilliseconds)
        demand.noteAnswer(asked: asked, accepted: accepted)
        lastError = nil
        backoffUntil = 0
        return true
    }

    /// The fill state after an answer (``FillStateMachine/loadSucceeded()``); `.none` when
    /// the pool no longer loads (a parked borrow's callback may have disabled it meanwhile).
    func fillSucceeded(isShutDown: Bool) -> FillStateMachine.Action {
        let action = fill.loadSucceeded()
        return loads(isShutDown: isShutDown) ? action : .none
    }

    /// The error to fail a borrow with at once: the source is unreachable or failed finally
    /// and nothing is in flight, so no ad can arrive in time; nil otherwise.
    var failureWithNothingComing: UpstreamError? {
        guard inFlight == 0, let error = lastError else { return nil }
        switch fill.state {
        case .unreachable, .suspended: return error
        case .ready, .backingOff: return nil
        }
    }

    /// The error to end every parked borrow with at `now` (Unix ms), nil for none: borrows are
    /// parked, nothing can be lent and nothing can come (``failureWithNothingComing``).
    func parkedBorrowsFailing(at now: Int64) -> UpstreamError? {
        guard !parked.isEmpty, !hasLendableAd(at: now) else { return nil }
        return failureWithNothingComing
    }

    /// A request failed with `error`: counted and kept for borrows that fail fast.
    func fillFailed(_ error: UpstreamError) {
        stats.upstreamFailures += 1
        lastError = error
    }

    /// Settles a failure of a pool still loading at `now` (Unix ms): the source's
    /// `Retry-After` holds every path; the fill state decides (``FillStateMachine/loadFailed(_:probe:)``);
    /// unless a retry is scheduled (its timer sets the backoff), borrows and prefetches wait
    /// out `retryDelay` too, until an answer comes.
    /// - Returns: nil when the pool no longer loads (``loads(isShutDown:)``): nothing settles.
    func failureSettled(
        _ error: UpstreamError, probe: Bool, at now: AdInstant, isShutDown: Bool
    ) -> FillStateMachine.Action? {
        guard loads(isShutDown: isShutDown) else { return nil }
        let retryAfter = error.retryAfter ?? .zero
        if retryAfter > .zero {
            retryAfterUntil = max(retryAfterUntil, (now + retryAfter).unixMilliseconds)
        }
        let action = fill.loadFailed(error.code, probe: probe)
        if case .scheduleRetry = action {
            // The retry timer sets the backoff: its own delay.
        } else {
            backoffUntil = max(backoffUntil, (now + configuration.retry.delay).unixMilliseconds)
        }
        return action
    }

    /// No request goes upstream before `until` (Unix ms): a retry's delay.
    /// - Returns: when the retry timer is due: the end of the backoff (``notBefore``, a
    ///   `Retry-After` may hold longer).
    @discardableResult
    func backOff(until: Int64) -> AdInstant {
        backoffUntil = max(backoffUntil, until)
        return AdInstant(unixMilliseconds: notBefore)
    }

    /// A top-up wanted `refused` more ads than the memory budget had room for.
    func countBudgetRefused(_ refused: Int) {
        stats.budgetRefused += UInt64(refused)
    }

    /// Whether the last top-up wanted more requests than the concurrency limit let it send.
    func noteHeldBackByCap(_ held: Bool) {
        heldBackByCap = held
    }

    /// The configured cap holding the pool back is `reason` from `now` (Unix ms; nil: none):
    /// the time held back accumulates. Returns whether it changed (the loader tells observers).
    func heldBackChanged(to reason: HoldBack?, at now: Int64) -> Bool {
        guard heldBack != reason else { return false }
        if heldBack != nil { heldBackMilliseconds += max(0, now - heldBackSince) }
        heldBack = reason
        heldBackSince = now
        return true
    }

    /// Waits in the source's request-rate queue with `wait`: returns true when the pool
    /// joins the queue, false when it waits already (the waits merge).
    func waitForBudget(_ wait: BudgetWait) -> Bool {
        guard budgetWait != nil else {
            budgetWait = wait
            return true
        }
        budgetWait!.merge(wait.trigger, wait.amount)
        return false
    }

    /// Event: the pool's turn in the source's queue came at `now`: its wait is taken, and
    /// returned unless the pool was disabled or went idle meanwhile (no request goes for a
    /// pool nobody asks for any more). Nil: no top-up.
    func budgetTurnCame(at now: AdInstant) -> BudgetWait? {
        guard let wait = budgetWait else { return nil }
        budgetWait = nil
        guard enabled, !isIdle(at: now) else { return nil }
        return wait
    }

    // MARK: Timers

    /// The sweep timer is `task`, due at once when `continuation` (a sweep hit its limit).
    func sweepScheduled(_ task: any ScheduledTask, continuation: Bool) {
        sweepTimer?.cancel()
        sweepTimer = task
        sweepIsContinuation = continuation
    }

    /// When the sweep timer is to be (re)scheduled, if at all.
    enum SweepSchedule: Equatable {
        /// Leave it as it is: the pool does not load or has nothing available, or a sweep is
        /// pending already (one due at once, when `immediately` is asked for).
        case keep
        /// Due at once: continue a sweep that hit its per-callback limit.
        case now
        /// Due after `sweepInterval`.
        case afterInterval
    }

    /// Event: a sweep is asked for, due at once when `immediately` (continuing a sweep that
    /// hit its limit), else after the sweep interval. A pending sweep stays unless this one is
    /// due at once and it is not.
    func sweepWanted(immediately: Bool, isShutDown: Bool) -> SweepSchedule {
        guard loads(isShutDown: isShutDown), !available.isEmpty else { return .keep }
        if sweepTimer != nil {
            guard immediately, !sweepIsContinuation else { return .keep }
        }
        return immediately ? .now : .afterInterval
    }

    /// The sweep timer fired. Returns whether the sweep runs (the pool still loads).
    func sweepTimerFired(isShutDown: Bool) -> Bool {
        sweepTimer = nil
        sweepIsContinuation = false
        return loads(isShutDown: isShutDown)
    }

    /// How a sweep callback ends, once it expired what was due and topped up.
    enum SweepEnd: Equatable {
        /// It hit its limit and scheduled its continuation: nothing more now.
        case continuing
        /// Serve the borrows parked behind the expired ads and re-arm the sweep.
        case finished
    }

    /// Event: a sweep callback expired what it could (and topped up).
    func sweepPassEnded() -> SweepEnd {
        sweepTimer == nil ? .finished : .continuing
    }

    /// The retry timer is `task` (one pending before is cancelled).
    func retryScheduled(_ task: any ScheduledTask) {
        retryTimer?.cancel()
        retryTimer = task
    }

    /// What the retry timer's firing asks of the loader.
    enum RetryTimerStep: Equatable {
        /// The backoff was pushed later meanwhile (a longer `Retry-After`): schedule the
        /// retry timer again, at this instant.
        case waitUntil(AdInstant)
        /// The retry is due: carry out the fill state's action (`.none` when the pool no
        /// longer loads).
        case fill(FillStateMachine.Action)
    }

    /// The retry timer fired at `now`: waits on while the backoff lasts, else the retry is
    /// due (``FillStateMachine/retryTimerFired()``).
    func retryTimerFired(at now: AdInstant, isShutDown: Bool) -> RetryTimerStep {
        retryTimer = nil
        let notBefore = self.notBefore
        if now.unixMilliseconds < notBefore { return .waitUntil(AdInstant(unixMilliseconds: notBefore)) }
        let action = fill.retryTimerFired()
        return .fill(loads(isShutDown: isShutDown) ? action : .none)
    }

    /// Cancels a pending retry timer.
    func cancelRetry() {
        retryTimer?.cancel()
        retryTimer = nil
    }

    /// The probe timer is `task`: a pending retry and probe are cancelled.
    func probeScheduled(_ task: any ScheduledTask) {
        cancelRetry()
        probeTimer?.cancel()
        probeTimer = task
    }

    /// The probe timer fired: what the fill state does now (`.none` when the pool no longer
    /// loads).
    func probeTimerFired(isShutDown: Bool) -> FillStateMachine.Action {
        probeTimer = nil
        let action = fill.probeTimerFired()
        return loads(isShutDown: isShutDown) ? action : .none
    }

    /// Cancels a pending probe (the source answers again).
    func cancelProbe() {
        probeTimer?.cancel()
        probeTimer = nil
    }

    /// The removal check is `task` (one pending before is cancelled).
    func removalCheckScheduled(_ task: any ScheduledTask) {
        removalTimer?.cancel()
        removalTimer = task
    }

    /// The removal check fired.
    func removalTimerFired() {
        removalTimer = nil
    }

    /// When a removal check is due: `poolRemovalTimeout` after the last demand, or
    /// `notBefore` if later.
    func removalCheckDeadline(notBefore: AdInstant?) -> AdInstant {
        let deadline = AdInstant(unixMilliseconds: lastDemandAt) + configuration.poolRemovalTimeout
        if let notBefore, notBefore > deadline { return notBefore }
        return deadline
    }

    /// What a removal check decides.
    enum RemovalStep: Equatable {
        /// Remove the pool: no demand for `poolRemovalTimeout`, it holds nothing and no
        /// backoff holds it.
        case remove
        /// Check again at this instant.
        case checkAgain(AdInstant)
    }

    /// Event: the removal check of a pool still in its loader's table ran at `now`.
    ///
    /// Not yet idle for `poolRemovalTimeout`: again once it may be. Still holding ads: after a
    /// sweep interval, by when its idle state has let them expire or be returned. A pool
    /// backing off keeps its backoff: removed now, a borrow would create it afresh and ask
    /// upstream before the failure's `Retry-After`; again at its end.
    func removalCheck(at now: AdInstant) -> RemovalStep {
        let nowMilliseconds = now.unixMilliseconds
        guard nowMilliseconds - lastDemandAt >= configuration.poolRemovalTimeout.milliseconds else {
            return .checkAgain(removalCheckDeadline(notBefore: nil))
        }
        guard isEmpty else { return .checkAgain(removalCheckDeadline(notBefore: now + configuration.sweepInterval)) }
        let notBefore = self.notBefore
        guard nowMilliseconds >= notBefore else {
            return .checkAgain(removalCheckDeadline(notBefore: AdInstant(unixMilliseconds: notBefore)))
        }
        return .remove
    }

    // MARK: Expiry, eviction, invalidation

    /// What the next step of an expiry purge does.
    enum ExpiryStep {
        /// Nothing more is due.
        case done
        /// This ad could no longer be lent and was dropped as expired (counted): report it.
        case expired(Ad)
        /// More are due, but the purge dropped its limit already: continue in a sweep due at once.
        case continueLater
    }

    /// Ads expiring at or before this (Unix ms) cannot be lent at `now` (Unix ms): less than
    /// the minimum remaining life is left. A purge takes it once, at its start.
    func expiryHorizon(at now: Int64) -> Int64 {
        now &+ minimumLifeMilliseconds
    }

    /// Event: a purge that dropped `expiredSoFar` ads, at most `limit` per call, looks at the
    /// soonest-expiring available ad: dropped as expired when it expires by `horizon`
    /// (``expiryHorizon(at:)``).
    func expireNext(horizon: Int64, expiredSoFar: Int, limit: Int) -> ExpiryStep {
        guard let soonest = available.first, soonest.deadline <= horizon else { return .done }
        guard expiredSoFar < limit else { return .continueLater }
        return .expired(dropAvailable(soonest.handle, reason: .expired))
    }

    /// Whether the soonest-expiring available ad may be lent at `now` (Unix ms).
    func hasLendableAd(at now: Int64) -> Bool {
        guard let soonest = available.first else { return false }
        return now &+ minimumLifeMilliseconds < soonest.deadline
    }

    /// Where the memory budget's eviction (``NativeAdvertisementLoader/makeRoom(for:need:)``)
    /// ranks this pool as a giver of ads.
    enum EvictionRank: Equatable {
        /// Gives nothing: disabled, or no ad available.
        case none
        /// Idle: its ads go first.
        case idle
        /// Stocked beyond its own target: gives what is beyond it, once idle pools gave all.
        case stocked
    }

    /// The pool's ``EvictionRank`` at `now`.
    func evictionRank(at now: AdInstant) -> EvictionRank {
        guard enabled, !available.isEmpty else { return .none }
        if isIdle(at: now) { return .idle }
        return loadedAndInFlight > target ? .stocked : .none
    }

    /// The available ad eviction would drop next (the soonest to expire), nil when none may go:
    /// none is available, or `keepingTarget` and the pool is not above its target.
    func evictionCandidate(keepingTarget: Bool) -> DeadlineHeap<AdHandle>.Entry? {
        guard let first = available.first, !keepingTarget || loadedAndInFlight > target else { return nil }
        return first
    }

    /// Event: eviction takes the soonest-expiring available ad at `now` (Unix ms; one must be
    /// available): dropped for the memory budget, or as expired when it could not be lent any
    /// more (counted). Returns it and the reason, to report.
    func evictSoonest(at now: Int64) -> (ad: Ad, reason: AdDropReason) {
        let first = available.first!
        let reason: AdDropReason =
            isLendable(expiresAt: AdInstant(unixMilliseconds: first.deadline), at: now) ? .memoryBudget : .expired
        return (dropAvailable(first.handle, reason: reason), reason)
    }

    /// Takes the available ad `handle` out for `reason` (counted) and returns it.
    func dropAvailable(_ handle: AdHandle, reason: AdDropReason) -> Ad {
        let ad = discard(handle)
        countDropped(reason)
        return ad
    }

    // MARK: Enable, disable, retire, drain

    /// The loader was enabled or disabled.
    func setEnabled(_ enabled: Bool) {
        self.enabled = enabled
    }

    /// A reload removed or replaced the pool's loader: it stops loading and lending, out of
    /// its loader's table, kept only by its leases until they end.
    func retire() {
        enabled = false
        isRetired = true
    }

    /// What a drain let go, for the loader to report and answer.
    struct Drained {
        /// The available ads dropped (counted), each to report.
        var ads: [Ad]
        /// The borrows that were parked, to end with `.unavailable`.
        var parked: [ParkedBorrowHandle]
    }

    /// Drops the available ads for `reason`, marks leased ones to be removed for it when their
    /// leases end, takes the parked borrows out, cancels the timers and resets the fill state
    /// and backoff; the budget queue entry, if any, is skipped.
    func drain(reason: AdDropReason) -> Drained {
        cancelTimers()
        fill.reset()
        backoffUntil = 0
        retryAfterUntil = 0
        onScreenMiss = false
        budgetWait = nil
        var ads: [Ad] = []
        ads.reserveCapacity(available.count)
        for handle in availableHandles { ads.append(dropAvailable(handle, reason: reason)) }
        markLeasedAds(reason: reason)
        return Drained(ads: ads, parked: parked.removeAll())
    }

    /// Marks every leased ad to be removed for `reason` when its lease ends.
    func markLeasedAds(reason: AdDropReason) {
        var leased: [AdHandle] = []
        forEachRecord { handle, record in
            if record.state != .available { leased.append(handle) }
        }
        for handle in leased { markPendingDrop(handle, reason: reason) }
    }

    // MARK: Restore

    /// A pool created by a restore takes the snapshot's demand estimate and Prefetch count
    /// (within `maximum`).
    func restoreDemand(_ snapshot: PoolSnapshot.Demand, prefetchWanted: Int, maximum: Int, at now: Int64) {
        demand = DemandEstimate(snapshot, now: now)
        self.prefetchWanted = min(max(0, prefetchWanted), maximum)
    }

    /// A suspension's restore brought back `ads` ads and `restoration`'s leases, at `now`:
    /// counted in Stats and kept for a Watch that opens later (``restoration``).
    func restored(ads: Int, _ restoration: AdEvent.Restoration, at now: AdInstant) {
        stats.restoredAds += UInt64(ads)
        stats.restoredLeases += UInt64(restoration.leases)
        if let earlier = self.restoration {
            // The same pool in two snapshots: one restore, counted together.
            var sum = restoration
            sum.leases += earlier.restoration.leases
            sum.expired += earlier.restoration.expired
            self.restoration = (earlier.ads + ads, sum, earlier.at)
        } else {
            self.restoration = (ads, restoration, now)
        }
    }
}
