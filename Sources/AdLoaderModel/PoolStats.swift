/// Gauges and counters of one pool, (loader, ad unit).
///
/// Every ad ever loaded is in exactly one place, so at all times
/// `loaded == available + leased + consumed + expired + removed`.
public struct PoolStats: Hashable, Sendable {
    public var loader: String
    public var adUnitID: String
    /// The consent class the pool's ads were bought for.
    public var consentClass: String
    /// Gauge: ads in the pool, ready to lend. May include ads that expired since the last
    /// sweep, borrow or prefetch (they are never lent, and counted expired when found).
    public var available = 0
    /// Gauge: ads lent under an open lease.
    public var leased = 0
    /// Gauge: ads asked for upstream and not answered yet.
    public var inFlight = 0
    /// Gauge: borrows waiting for an ad.
    public var parkedBorrows = 0
    /// Gauge: upstream requests in flight (at most `maximumConcurrentRequests`).
    public var requestsInFlight = 0
    /// Gauge: requests the pool's measured demand asks to keep in flight (Little's law:
    /// `2 × fresh borrows/s × round trip / ads per request + 2`); the pool sends at most this
    /// many, and at most `maximumConcurrentRequests`.
    public var inFlightTarget = 0
    /// Gauge: the configured cap that holds the pool below its demand now, nil when none does.
    public var heldBack: HoldBack?
    /// Counter: milliseconds the pool spent held back by a configured cap (``heldBack``).
    public var heldBackMilliseconds: UInt64 = 0
    /// Gauge: the measured upstream round trip, milliseconds (1,000 before the first answer).
    public var roundTripMilliseconds = 0.0
    /// Gauge: the measured ads per answered request (no-fills count 0); 0 before the first.
    public var adsPerRequest = 0.0
    /// Gauge: the least remaining life an ad needs to be lent now, milliseconds.
    public var minimumRemainingLifeMilliseconds: Int64 = 0
    /// Ads that arrived with less than the minimum remaining life left and were dropped at
    /// once (counted in ``expired`` too).
    public var expiredOnArrival: UInt64 = 0
    /// Ads the daemon-wide memory budget kept the pool from asking for.
    public var budgetRefused: UInt64 = 0
    /// Ads dropped unleased to make room under the daemon-wide memory budget for a pool with
    /// demand (``AdDropReason/memoryBudget``; counted in ``removed`` too).
    public var droppedForMemory: UInt64 = 0
    /// Gauge: what the pool tops up to (loaded plus in flight): the measured demand's target
    /// for demand sizing, `maximumRetainedAdvertisements` for fixed sizing.
    public var target = 0
    /// Gauge: no borrow or prefetch for `idleTimeout`; the pool asks upstream for nothing on
    /// its own, and is removed once empty for `poolRemovalTimeout`.
    public var idle = false
    /// Ads received from the source (including ones dropped or expired on arrival).
    public var loaded: UInt64 = 0
    /// Ads that reached their expiry unconsumed (in the pool, or when their lease ended).
    public var expired: UInt64 = 0
    /// Ads shown `showCountThreshold` times (reported as event `removed`, reason "consumed").
    public var consumed: UInt64 = 0
    /// Ads dropped neither consumed nor expired: by disabling the loader or shutdown,
    /// including ads that arrived for a disabled loader. Consumed ads are not counted here.
    public var removed: UInt64 = 0
    /// Requests sent to the demand source, probes included.
    public var upstreamRequests: UInt64 = 0
    /// Requests the source answered with an error.
    public var upstreamFailures: UInt64 = 0
    /// Borrows answered with a lease (new or reused), parked ones included.
    public var borrowHits: UInt64 = 0
    /// Borrows answered `.noAdYet` (at once or when the wait ended), and borrows refused
    /// parking (``BorrowOutcome/parkingRefused``).
    public var borrowMisses: UInt64 = 0
    /// Leases ended by the lease timeout.
    public var leasesReclaimed: UInt64 = 0
    /// Ads the pool store gave back at start (leased ones included; also counted in ``loaded``).
    public var restoredAds: UInt64 = 0
    /// Leases the pool store gave back at start.
    public var restoredLeases: UInt64 = 0

    public init(loader: String, adUnitID: String, consentClass: String = "default") {
        self.consentClass = consentClass
        self.loader = loader
        self.adUnitID = adUnitID
    }
}
