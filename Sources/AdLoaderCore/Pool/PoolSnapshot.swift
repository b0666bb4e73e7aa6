/// Everything one pool holds, as plain values: its key, its available ads, its leases, its
/// loader's creative blocks and its measured demand.
///
/// Taken by ``NativeAdvertisementLoader/snapshot()`` and handed back to
/// ``NativeAdvertisementLoader/restore(_:)`` (in the same process or a later one, e.g. from a
/// store across a restart); a snapshot restored into an empty loader and taken again compares
/// equal, except what expired meanwhile.
///
/// A source's ``AdSourceContext`` is an object, not a value: a snapshot carries instead the
/// bytes the context gives as its ``AdSourceContext/snapshotState`` (nil for a source that
/// keeps nothing worth restoring), and a restore asks the pool's source to rebuild the
/// context from them (``DemandSource/restoreContext(from:for:)``). Ads in a snapshot have no
/// `sourceContext`.
///
/// Not carried: ads in flight (a restored pool asks again), parked borrows (their callers are
/// gone), timers, backoff and counters other than the demand estimate, and app-open
/// reservations of leases.
public struct PoolSnapshot: Hashable, Sendable {
    /// One ad, with what its source keeps for it.
    public struct PooledAd: Hashable, Sendable {
        /// The ad, `sourceContext` nil; `showCount` counts the shows so far.
        public var ad: Ad
        /// The ad's ``AdSourceContext/snapshotState`` when taken; nil: none.
        public var sourceState: [UInt8]?

        public init(ad: Ad, sourceState: [UInt8]? = nil) {
            var ad = ad
            if ad.sourceContext != nil { ad.sourceContext = nil }
            self.ad = ad
            self.sourceState = sourceState
        }
    }

    /// One open lease and its ad.
    public struct LeasedAd: Hashable, Sendable {
        /// The id the client holds (``Lease/id``); a restore keeps it, so the client's Return
        /// still finds the lease.
        public var leaseID: UInt64
        /// The feed cell, or nil when the borrow named none.
        public var slot: String?
        /// When the lease ends unless returned or renewed (never after the ad's expiry).
        public var expiresAt: AdInstant
        public var pooled: PooledAd
        /// Set when the loader dropped the ad while it was leased (e.g. its creative was
        /// invalidated): it is removed for this reason when the lease ends, never lent again.
        public var pendingDrop: AdDropReason?

        public init(
            leaseID: UInt64, slot: String?, expiresAt: AdInstant, pooled: PooledAd, pendingDrop: AdDropReason? = nil
        ) {
            self.leaseID = leaseID
            self.slot = slot
            self.expiresAt = expiresAt
            self.pooled = pooled
            self.pendingDrop = pendingDrop
        }
    }

    /// The pool's measured demand (demand sizing, ``DemandEstimate``): borrow rates per
    /// millisecond, the rate window under way, and upstream round trip and fill.
    public struct Demand: Hashable, Sendable {
        /// Fresh borrows per millisecond, fast average.
        public var averageRate: Double
        /// Fresh borrows per millisecond, slow average (about 8 minutes).
        public var slowRate: Double
        /// Start of the 5 s rate window under way.
        public var windowStart: AdInstant
        /// Fresh borrows counted in that window so far.
        public var windowCount: Int
        /// Average upstream round trip, milliseconds.
        public var latencyMilliseconds: Double
        /// Average ads an answered request brought; nil before the first answer.
        public var adsPerRequest: Double?

        public init(
            averageRate: Double, slowRate: Double, windowStart: AdInstant, windowCount: Int,
            latencyMilliseconds: Double, adsPerRequest: Double?
        ) {
            self.averageRate = averageRate
            self.slowRate = slowRate
            self.windowStart = windowStart
            self.windowCount = windowCount
            self.latencyMilliseconds = latencyMilliseconds
            self.adsPerRequest = adsPerRequest
        }
    }

    /// The loader the pool belongs to (its ads were loaded with that loader's request).
    public var loader: String
    public var adUnitID: String
    /// The loader's format when taken: a restore into a loader of another format skips the pool.
    public var format: AdFormat
    /// When the snapshot was taken.
    public var takenAt: AdInstant
    /// Available ads, in lending order (soonest expiry first).
    public var ads: [PooledAd]
    /// Open leases, by lease id.
    public var leases: [LeasedAd]
    /// The creatives the pool's loader does not lend for now, each until an instant
    /// (``NativeAdvertisementLoader/invalidateLease(_:shown:reason:)``); the same for every
    /// pool of one loader. Blocks that ended are left out.
    public var blockedCreatives: [CreativeKey: AdInstant]
    public var demand: Demand
    /// Ads a Prefetch said the caller will want soon and not yet borrowed.
    public var prefetchWanted: Int

    public init(
        loader: String, adUnitID: String, format: AdFormat, takenAt: AdInstant, ads: [PooledAd] = [],
        leases: [LeasedAd] = [], blockedCreatives: [CreativeKey: AdInstant] = [:], demand: Demand,
        prefetchWanted: Int = 0
    ) {
        self.loader = loader
        self.adUnitID = adUnitID
        self.format = format
        self.takenAt = takenAt
        self.ads = ads
        self.leases = leases
        self.blockedCreatives = blockedCreatives
        self.demand = demand
        self.prefetchWanted = prefetchWanted
    }
}

/// What ``NativeAdvertisementLoader/restore(_:)`` did with a list of snapshots.
public struct PoolRestoreResult: Hashable, Sendable {
    /// A snapshot that was not restored, and why.
    public struct Skipped: Hashable, Sendable {
        public var loader: String
        public var adUnitID: String
        /// E.g. "unknown loader", "loader is disabled", "format changed", "pool limit".
        public var reason: String
    }

    /// Pools that received ads or leases (created or already there).
    public var pools = 0
    /// Ads put back as available (including those of leases that ended meanwhile).
    public var ads = 0
    /// Leases reopened under their id.
    public var leases = 0
    /// Leases whose timeout passed meanwhile: ended as a reclaim would.
    public var reclaimed = 0
    /// Ads dropped because they expired meanwhile (or were left with less than the minimum
    /// remaining life), each reported as an expiry: `expired` event, the source's notice.
    public var expired = 0
    /// Ads dropped for another reason (a pending drop, a blocked creative), reported as removed.
    public var removed = 0
    /// Ads and leases left out because the pool holds that ad, or that lease id is open,
    /// already (a snapshot restored twice).
    public var duplicates = 0
    /// Snapshots left out: their ads are not in the loader, and no notice was sent for them.
    public var skipped: [Skipped] = []

    public init() {}
}
