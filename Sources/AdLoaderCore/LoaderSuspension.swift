/// What ``NativeAdvertisementLoader/suspend()`` hands the pool store at a clean stop, and
/// ``NativeAdvertisementLoader/restore(_:)`` takes back at the next start: every pooled ad of
/// every pool, with its lease when it was lent, and its source's encoding of its context.
public struct LoaderSuspension: Sendable {
    /// One ad, its source context as its source encoded it (empty: none), and its lease.
    public struct SuspendedAd: Sendable {
        public var ad: Ad
        public var context: [UInt8]
        public var lease: SuspendedLease?

        public init(ad: Ad, context: [UInt8], lease: SuspendedLease? = nil) {
            self.ad = ad
            self.context = context
            self.lease = lease
        }
    }

    /// A lease as a client knows it: its id, its slot, when it ends.
    public struct SuspendedLease: Hashable, Sendable {
        public var id: UInt64
        public var slot: String?
        public var expiresAt: AdInstant

        public init(id: UInt64, slot: String?, expiresAt: AdInstant) {
            self.id = id
            self.slot = slot
            self.expiresAt = expiresAt
        }
    }

    /// The ads, pool by pool (loader, then ad unit), leased ones included.
    public var ads: [SuspendedAd]
    /// When the suspension was taken.
    public var suspendedAt: AdInstant

    public init(ads: [SuspendedAd], suspendedAt: AdInstant) {
        self.ads = ads
        self.suspendedAt = suspendedAt
    }
}

/// What ``NativeAdvertisementLoader/restore(_:)`` did with a suspension.
public struct RestoreReport: Hashable, Sendable {
    /// Ads back in their pools (leased ones included).
    public var ads = 0
    /// Leases back: a Return or a Borrow of their slot works as before the stop.
    public var leases = 0
    /// Ads that expired while the daemon was down: dropped as an expiry drops them (their
    /// loss notice when never shown).
    public var expired = 0
    /// Leases whose timeout passed while the daemon was down: reclaimed (their ad back in
    /// the pool when still lendable); a Return of one answers as for a reclaimed lease.
    public var reclaimedLeases = 0
    /// Ads that could not come back: their loader is gone, disabled or of another format now,
    /// its pool limit is reached, or the source did not read their context.
    public var dropped = 0

    public init() {}
}
