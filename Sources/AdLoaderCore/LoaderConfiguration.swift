/// A named loader: the upstream request and the rules of its pools.
public struct LoaderConfiguration: Hashable, Sendable {
    public static let defaultName = "default"

    public var name: String
    /// The demand source's name, e.g. "synthetic".
    public var source: String = "synthetic"
    /// The kind of ad the loader keeps. A full-screen format needs `showCountThreshold` 1:
    /// a full-screen ad is shown once.
    public var format: AdFormat = .native
    public var keywords: [String] = []
    public var contentURL: String? = nil
    public var nonPersonalized: Bool = false
    public var targeting: [String: String] = [:]
    /// Ads asked for per upstream request (a batch), 1...5.
    ///
    /// Every upstream request is billed and rate-limited, so a pool batches: the automatic
    /// top-ups (after a borrow, a consumed or expired ad, a sweep, a reclaimed lease, a retry)
    /// send only whole batches of this many ads, as many as are missing. The rest, fewer than
    /// a batch, is asked for only when the pool is running dry: no ad available and none in
    /// flight beyond the borrows already parked. An explicit prefetch fills completely,
    /// ending with one partial batch. A pool therefore holds between
    /// `maximumRetainedAdvertisements - numberOfAdvertisements + 1` and
    /// `maximumRetainedAdvertisements` ads loaded or in flight at steady traffic.
    public var numberOfAdvertisements: Int = 5
    /// How a pool chooses how many ads to keep: ``PoolSizing/demand`` (the default) follows
    /// its measured demand, ``PoolSizing/fixed`` tops up to ``maximumRetainedAdvertisements``.
    public var sizing: PoolSizing = .demand
    /// The memory bound of a pool: loaded (available and leased) plus in-flight ads, never
    /// exceeded, 1...10_000_000. With ``PoolSizing/fixed`` sizing it is also the pool's target;
    /// with ``PoolSizing/demand`` sizing the pool's target is usually far below it. See
    /// ``numberOfAdvertisements`` for when a pool tops up.
    public var maximumRetainedAdvertisements: Int = 10_000
    /// How long an ad stays valid after it loaded.
    public var lifetime: Duration = .seconds(3600)
    /// How often expired ads are swept out.
    ///
    /// One sweep callback removes at most 500 expired ads (an internal limit, about a
    /// millisecond of work), so that ads loaded together and expiring together do not stall
    /// the event loop; when more are due, the sweep continues in a callback scheduled at
    /// once, letting the loop serve other work in between. Expired ads are never lent
    /// meanwhile.
    public var sweepInterval: Duration = .seconds(60)
    /// Times one ad may be shown before it is consumed, >= 1.
    public var showCountThreshold: Int = 1
    /// A lease not returned within this is reclaimed (the ad counts as unshown). A lease never
    /// outlives its ad: it ends at the ad's expiry when that comes first. Borrowing again for
    /// the same slot renews it (bounded by the ad's expiry the same way).
    public var leaseTimeout: Duration = .seconds(300)
    /// The least valid life an ad must have left to be lent (or kept for lending, or lent
    /// again to its slot); nil means ``leaseTimeout``, so that a lease normally ends by its
    /// return or timeout, not by its ad expiring on screen. Ads with less life left are
    /// dropped as expired (event `expired`). Must be below ``lifetime``.
    public var minimumRemainingLife: Duration? = nil
    /// Upstream requests one pool may have in flight at once, 1...1_000_000 (probes included).
    /// A top-up that needs more sends the rest as earlier requests complete; when it is short,
    /// a pool's next request goes out as soon as one completes while a cell on screen waits
    /// (see ``NativeAdvertisementLoader/borrow(adUnitID:loader:slot:wait:mayPark:whenServed:)``).
    ///
    /// The cap bounds what one pool can load: at most `cap × numberOfAdvertisements × fill
    /// rate` ads per upstream round trip. With the default 3, batches of 5, a fill rate of 0.9
    /// and a 210 ms round trip that is about 64 ads per second, whatever the pool's size; a
    /// pool whose cells need more fresh ads per second than that misses however well it is
    /// sized. The cap a pool needs is `ceil(peak fresh ads per second × round trip /
    /// (numberOfAdvertisements × fill rate))` plus headroom for slow answers (BENCHMARKS.md,
    /// "Pool economics scenarios").
    public var maximumConcurrentRequests: Int = 3
    /// A pool with no borrow or prefetch for this long is idle: it asks upstream for nothing
    /// on its own (no top-ups after expiries, reclaims or retries, no probes) until the next
    /// borrow or prefetch. Stats show it (`idle`).
    public var idleTimeout: Duration = .seconds(600)
    /// An idle pool that holds nothing (no ad available, leased or in flight, no borrow
    /// parked) and has had no borrow or prefetch for this long is removed (event
    /// `poolRemoved`); a later borrow or prefetch creates it again. At least ``idleTimeout``.
    public var poolRemovalTimeout: Duration = .seconds(3_600)
    /// The longest wait a borrow may ask for.
    public var maximumBorrowWait: Duration = .seconds(30)
    /// The most ad units this loader keeps a pool for, 1...1_000_000.
    ///
    /// Every prefetch or borrow of a new ad unit creates its pool, which is kept for the
    /// daemon's life and at once asks upstream (billed, rate-limited) for
    /// ``maximumRetainedAdvertisements`` ads. Without a cap, a client sending random ad unit
    /// ids would exhaust memory and the upstream quota. At the cap, a prefetch or borrow of
    /// one more ad unit throws ``LoaderError`` `.resourceExhausted` without asking upstream
    /// for anything; existing pools keep working, and Stats never creates a pool.
    ///
    /// The cap is per loader, not server-wide, because a loader fixes the pool size and the
    /// upstream account: the worst case, `maximumPools * maximumRetainedAdvertisements` ads
    /// held and asked for, is then set where both factors are, and one loader's ad units
    /// cannot use up another's allowance.
    public var maximumPools: Int = 1_000
    public var retry: RetryPolicy = RetryPolicy()
    /// A disabled loader holds no ads and loads none.
    public var enabled: Bool = true
    /// How long a creative invalidated by a client (a Return with `invalidate`) is not lent
    /// again by this loader: its ads already in a pool are dropped, ads of it arriving later
    /// are dropped on arrival (reason `invalidated`) until this has passed. Zero removes the
    /// returned ad and its pool siblings but blocks nothing later. See ``CreativeKey`` for
    /// what identifies a creative.
    public var invalidationBlockTime: Duration = .seconds(3600)
    /// The most creatives this loader keeps blocked at once, 1...100_000 (memory: one key,
    /// the source's creative id or the creative itself, per entry). Blocking one more at the
    /// cap lifts the block that would end soonest, early.
    public var maximumBlockedCreatives: Int = 1_000
    /// When an AppOpen call through this loader shows an ad (used by loaders of format
    /// ``AdFormat/appOpen``; AppOpen calls to a loader of another format are refused).
    public var appOpen: AppOpenPolicy = AppOpenPolicy()

    /// ``minimumRemainingLife``, or ``leaseTimeout`` when it is nil.
    public var effectiveMinimumRemainingLife: Duration { minimumRemainingLife ?? leaseTimeout }

    public init(name: String = LoaderConfiguration.defaultName) {
        self.name = name
    }

    /// Whether pools built with `self` may keep their ads under `other`: the same source,
    /// format and upstream request (ads loaded with one request are never served through
    /// another). Sizing, caps, timeouts, lifetime, retry and app-open settings may differ.
    public func keepsPools(under other: LoaderConfiguration) -> Bool {
        source == other.source && format == other.format && keywords == other.keywords
            && contentURL == other.contentURL && nonPersonalized == other.nonPersonalized
            && targeting == other.targeting
    }

    /// The request sent upstream for one ad unit.
    public func request(adUnitID: String) -> AdRequest {
        AdRequest(
            adUnitID: adUnitID, format: format, keywords: keywords, contentURL: contentURL,
            nonPersonalized: nonPersonalized, targeting: targeting)
    }

    /// Checks every field; the error names the first one out of range.
    /// - Throws: ``ConfigError`` with `field` set to the offending setting.
    public func validate() throws(ConfigError) {
        func fail(_ field: String, _ message: String) -> ConfigError {
            ConfigError(field: "loaders.\(name).\(field)", message: message)
        }
        if name.isEmpty { throw ConfigError(field: "loaders.name", message: "must not be empty") }
        if source.isEmpty { throw fail("source", "must not be empty") }
        if !(1...5).contains(numberOfAdvertisements) {
            throw fail("numberOfAdvertisements", "must be 1...5, got \(numberOfAdvertisements)")
        }
        if !(1...10_000_000).contains(maximumRetainedAdvertisements) {
            throw fail("maximumRetainedAdvertisements", "must be 1...10000000, got \(maximumRetainedAdvertisements)")
        }
        if !(1...1_000_000).contains(maximumPools) {
            throw fail("maximumPools", "must be 1...1000000, got \(maximumPools)")
        }
        if lifetime <= .zero { throw fail("lifetime", "must be positive") }
        if sweepInterval <= .zero { throw fail("sweepInterval", "must be positive") }
        if showCountThreshold < 1 { throw fail("showCountThreshold", "must be at least 1, got \(showCountThreshold)") }
        if format.isFullScreen && showCountThreshold != 1 {
            throw fail(
                "showCountThreshold",
                "must be 1 for format \(format) (a full-screen ad is shown once), got \(showCountThreshold)")
        }
        if leaseTimeout <= .zero { throw fail("leaseTimeout", "must be positive") }
        if let minimumRemainingLife, minimumRemainingLife < .zero {
            throw fail("minimumRemainingLife", "must not be negative")
        }
        if effectiveMinimumRemainingLife >= lifetime {
            throw fail(
                "minimumRemainingLife",
                "must be below lifetime (\(lifetime.milliseconds) ms), got \(effectiveMinimumRemainingLife.milliseconds) ms"
                    + (minimumRemainingLife == nil ? " (the default: leaseTimeout)" : ""))
        }
        if !(1...1_000_000).contains(maximumConcurrentRequests) {
            throw fail("maximumConcurrentRequests", "must be 1...1000000, got \(maximumConcurrentRequests)")
        }
        if idleTimeout <= .zero { throw fail("idleTimeout", "must be positive") }
        if poolRemovalTimeout < idleTimeout { throw fail("poolRemovalTimeout", "must be at least idleTimeout") }
        if maximumBorrowWait < .zero { throw fail("maximumBorrowWait", "must not be negative") }
        if invalidationBlockTime < .zero { throw fail("invalidationBlockTime", "must not be negative") }
        if !(1...100_000).contains(maximumBlockedCreatives) {
            throw fail("maximumBlockedCreatives", "must be 1...100000, got \(maximumBlockedCreatives)")
        }
        if retry.delay < .zero { throw fail("retry.delay", "must not be negative") }
        if !(retry.multiplier >= 1) { throw fail("retry.multiplier", "must be at least 1") }
        if retry.maximumDelay < retry.delay { throw fail("retry.maximumDelay", "must be at least retry.delay") }
        if !(0...1).contains(retry.jitter) { throw fail("retry.jitter", "must be 0...1") }
        if retry.maximumCount < 0 { throw fail("retry.maximumCount", "must not be negative") }
        if retry.probeInterval <= .zero { throw fail("retry.probeInterval", "must be positive") }
        try appOpen.validate(prefix: "loaders.\(name).appOpen")
    }
}
