/// The ads of one (loader, ad unit): available ads in expiry order, leased ads, the slots
/// holding leases, parked borrows, the fill state and the pool's counters.
///
/// A pool only keeps state; the loader decides when to load, lend, expire and emit events.
/// Ads live in a slab (an array with a free list) so that heaps and leases refer to them by
/// a small integer handle, and a retained ad costs its record plus one heap entry.
///
/// - Important: loop-confined like its loader.
final class AdPool {
    /// One loaded ad and where it is.
    struct Record {
        var ad: NativeAd
        /// Breaks expiry ties: the ad loaded first is lent first.
        var sequence: UInt64
        /// The lease holding the ad, or -1 while it is available.
        var leaseHandle: Int = -1
        /// Set when the loader dropped the ad while it was leased ("disabled", "shutdown"):
        /// it is removed when its lease ends.
        var dropReason: String?

        var isLeased: Bool { leaseHandle >= 0 }
    }

    let loader: String
    let adUnitID: String
    let configuration: LoaderConfiguration
    let source: any DemandSource
    let request: AdRequest

    /// Whether the pool loads and lends; mirrors its loader's enabled flag.
    // Stored properties are `@exclusivity(unchecked)`: this object is confined to one loop
    // thread and no method holds an access across a call that re-enters it, so the runtime's
    // dynamic exclusivity checks (swift_beginAccess: ~15% of the daemon's instructions under
    // load, callgrind) only cost time here.
    @exclusivity(unchecked) var enabled: Bool
    @exclusivity(unchecked) var stats: PoolStats
    @exclusivity(unchecked) var inFlight = 0
    @exclusivity(unchecked) var fill: FillStateMachine
    @exclusivity(unchecked) var parked = ParkedBorrowQueue()
    /// slot -> lease handle in the loader's ``LeaseTable``.
    @exclusivity(unchecked) var slots: [String: Int] = [:]

    @exclusivity(unchecked) var sweepTimer: (any ScheduledTask)?
    /// Whether `sweepTimer` is due now, continuing a sweep that hit its per-callback limit.
    @exclusivity(unchecked) var sweepIsContinuation = false
    @exclusivity(unchecked) var retryTimer: (any ScheduledTask)?
    @exclusivity(unchecked) var probeTimer: (any ScheduledTask)?

    @exclusivity(unchecked) private var records: [Record?] = []
    @exclusivity(unchecked) private var freeHandles: [Int] = []
    /// Available ads by expiry: the soonest to expire is lent first and swept first.
    @exclusivity(unchecked) private(set) var available = DeadlineHeap()
    @exclusivity(unchecked) private(set) var leasedCount = 0

    init(loader: String, adUnitID: String, configuration: LoaderConfiguration, source: any DemandSource) {
        self.loader = loader
        self.adUnitID = adUnitID
        self.configuration = configuration
        self.source = source
        self.request = configuration.request(adUnitID: adUnitID)
        self.enabled = configuration.enabled
        self.stats = PoolStats(loader: loader, adUnitID: adUnitID)
        self.fill = FillStateMachine(maximumRetries: configuration.retry.maximumCount)
    }

    /// Ads held (available or leased) plus ads asked for and not yet answered.
    var loadedAndInFlight: Int { available.count + leasedCount + inFlight }

    /// Ads a top-up would ask for now.
    var missing: Int { max(0, configuration.maximumRetainedAdvertisements - loadedAndInFlight) }

    /// The record of a live handle. Mutations through it edit the record in place (no copy
    /// of the ad and its strings).
    subscript(handle: Int) -> Record {
        get { records[handle]! }
        _modify { yield &records[handle]! }
    }

    /// Stores a freshly loaded ad as available.
    func insertAvailable(_ ad: NativeAd, sequence: UInt64) {
        let handle: Int
        let record = Record(ad: ad, sequence: sequence)
        if let reused = freeHandles.popLast() {
            handle = reused
            records[handle] = record
        } else {
            handle = records.count
            records.append(record)
            // Grow the free list with the slab, while loading: growing it later, in a sweep
            // that frees thousands of ads, would be a large allocation there, and glibc runs
            // its deferred consolidation of every small chunk freed so far on such an
            // allocation (measured: 170 ms in one callback after freeing 500k ads).
            if freeHandles.capacity < records.count { freeHandles.reserveCapacity(records.capacity) }
        }
        available.insert(handle: handle, deadline: ad.expiresAt.unixMilliseconds, sequence: sequence)
    }

    /// The available ad that expires soonest, without taking it.
    var soonestAvailable: (handle: Int, expiresAt: AdInstant)? {
        available.first.map { ($0.handle, AdInstant(unixMilliseconds: $0.deadline)) }
    }

    /// Takes the soonest-expiring available ad out of the heap and marks it leased.
    func lease(_ handle: Int, leaseHandle: Int) {
        available.remove(handle: handle)
        records[handle]!.leaseHandle = leaseHandle
        leasedCount += 1
    }

    /// Ends a lease on the pool side: the ad is neither available nor leased until the caller
    /// puts it back or discards it.
    func unlease(_ handle: Int) {
        records[handle]!.leaseHandle = -1
        leasedCount -= 1
    }

    /// Puts an unleased ad back among the available ones.
    func makeAvailable(_ handle: Int) {
        let record = records[handle]!
        available.insert(handle: handle, deadline: record.ad.expiresAt.unixMilliseconds, sequence: record.sequence)
    }

    /// Takes an available ad out of the heap and frees its record.
    @discardableResult
    func discardAvailable(_ handle: Int) -> NativeAd {
        available.remove(handle: handle)
        return discard(handle)
    }

    /// Frees the record of an ad that is neither available nor leased.
    @discardableResult
    func discard(_ handle: Int) -> NativeAd {
        let ad = records[handle]!.ad
        records[handle] = nil
        freeHandles.append(handle)
        return ad
    }

    /// Handles of every available ad, in a deterministic order.
    var availableHandles: [Int] { available.unorderedEntries.map(\.handle) }

    /// Gauges refreshed from the live state.
    var currentStats: PoolStats {
        var stats = self.stats
        stats.available = available.count
        stats.leased = leasedCount
        stats.inFlight = inFlight
        stats.parkedBorrows = parked.count
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
    }
}
