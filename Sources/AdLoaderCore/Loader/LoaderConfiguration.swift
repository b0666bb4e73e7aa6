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
    /// exceeded, 1...10_000_000; 10,000 when not set. With ``PoolSizing/fixed`` sizing it is
    /// also the pool's target. With ``PoolSizing/demand`` sizing it bounds the pool only when
    /// set (``bindsDemandSizing``): unset, a demand-sized pool is bounded by its demand (the
    /// cover, the ads' life) and the daemon-wide memory budget (`limits.maximumAds`), so that a
    /// busy feed (tens of thousands of ads on screen and in stock) is not held to 10,000. See
    /// ``numberOfAdvertisements`` for when a pool tops up.
    public var maximumRetainedAdvertisements: Int {
        get { configuredMaximumRetained ?? 10_000 }
        set { configuredMaximumRetained = newValue }
    }
    /// ``maximumRetainedAdvertisements`` as set, nil when left to its default.
    public var configuredMaximumRetained: Int? = nil
    /// Whether ``maximumRetainedAdvertisements`` bounds a demand-sized pool (it was set).
    public var bindsDemandSizing: Bool { configuredMaximumRetained != nil }
    /// What a pool's loaded plus in-flight ads never exceed: ``maximumRetainedAdvertisements``
    /// for fixed sizing or when set, else 10,000,000 (the range's top; the daemon's
    /// `limits.maximumAds` binds first).
    public var poolBound: Int {
        sizing == .fixed || bindsDemandSizing ? maximumRetainedAdvertisements : 10_000_000
    }
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
    /// again to its slot). Ads with less life left are dropped as expired (event `expired`);
    /// set, it must be below ``lifetime``.
    ///
    /// nil (the default) follows the ads' real life: a quarter of it, never more than
    /// ``leaseTimeout`` (a lease ends at its ad's expiry anyway). With the default lifetime of
    /// an hour that is the lease timeout; an exchange whose bids live 300 s (their own expiry,
    /// shorter than ``lifetime``) has them lent while more than 75 s is left. Each pool lowers
    /// its minimum to a quarter of the shortest life of the ads it received, so short-lived
    /// bids are lent, not dropped on arrival.
    public var minimumRemainingLife: Duration? = nil
    /// The ceiling of a pool's upstream requests in flight, 1...1_000_000 (probes included).
    ///
    /// A pool keeps as many requests in flight as its measured demand needs (Little's law:
    /// fresh borrows per second × measured round trip / measured ads per request, doubled,
    /// plus two; see Stats `in_flight_target`), and never more than this. The default, 256,
    /// is far above what one pool needs at ten times the feed-scroll trace (about 100 at
    /// 1,000 fresh ads/s and a 210 ms round trip), so it binds only on purpose. A pool held
    /// back by it is reported (Stats `held_back`, metric `adloader_pool_held_back`, a Watch
    /// event and a warning log naming this key). The source's request-rate budget
    /// (`sources.NAME.maximumRequestsPerSecond`) is the brake for what upstream may receive.
    public var maximumConcurrentRequests: Int = 256
    /// How long the pool's stock should serve its recent demand alone if the upstream stops:
    /// demand sizing keeps at least `fresh borrows per second × stockCover` ads available,
    /// bounded by a tenth of the time an ad can be lent (``lifetime`` minus the minimum
    /// remaining life), so that after a tenfold drop in demand the stock is still lent before
    /// it expires. Zero keeps only what the refill time needs. The default, 5 minutes, was
    /// chosen from the measured curve in BENCHMARKS.md ("Stock cover").
    public var stockCover: Duration = .seconds(300)
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
    /// How borrowers' privacy signals map to this loader's consent classes (each class is a
    /// pool per ad unit; an ad bought for one is never lent to another). The standard policy
    /// has `default`, `limited` and `coppa` (``ConsentPolicy/standard``).
    public var consent: ConsentPolicy = .standard
    /// The floor price of this loader's impressions (`imp.bidfloor`); nil: the source's own.
    public var bidFloor: Double? = nil
    /// The floor's currency (`imp.bidfloorcur`), an ISO 4217 code; nil: the source's currency.
    public var bidFloorCurrency: String? = nil
    /// Which feed positions carry ads when a feed is planned (``NativeAdvertisementLoader/plan(_:)``).
    public var placement: PlacementRules = PlacementRules()
    /// Which ads a planned feed keeps apart.
    public var separation: SeparationRules = SeparationRules()
    /// Feeds planned at once (their answers kept); a new feed beyond: RESOURCE_EXHAUSTED.
    public var maximumFeeds: Int = 10_000
    /// A feed with no Plan call for this long is forgotten and its unshown leases returned; at
    /// most ``leaseTimeout`` (a feed's leases must outlive its pauses); nil: ``leaseTimeout``.
    public var configuredFeedIdleTimeout: Duration? = nil
    /// ``configuredFeedIdleTimeout``, or ``leaseTimeout`` when it is nil.
    public var feedIdleTimeout: Duration { configuredFeedIdleTimeout ?? leaseTimeout }

    /// ``minimumRemainingLife``, or when it is nil the smaller of ``leaseTimeout`` and a
    /// quarter of ``lifetime`` (a pool lowers it further for ads that live shorter).
    public var effectiveMinimumRemainingLife: Duration {
        if let minimumRemainingLife { return minimumRemainingLife }
        return min(leaseTimeout, lifetime / 4)
    }

    /// Whether the minimum remaining life follows the ads' real life (``minimumRemainingLife`` nil).
    public var followsAdLife: Bool { minimumRemainingLife == nil }

    public init(name: String = LoaderConfiguration.defaultName) {
        self.name = name
    }

    /// Whether pools built with `self` may keep their ads under `other`: the same source,
    /// format and upstream request (ads loaded with one request are never served through
    /// another). Sizing, caps, timeouts, lifetime, retry and app-open settings may differ.
    public func keepsPools(under other: LoaderConfiguration) -> Bool {
        source == other.source && format == other.format && keywords == other.keywords
            && contentURL == other.contentURL && nonPersonalized == other.nonPersonalized
            && targeting == other.targeting && consent.classes == other.consent.classes && bidFloor == other.bidFloor
            && bidFloorCurrency == other.bidFloorCurrency
    }

    /// The request sent upstream for one pool: its ad unit and consent class (the class's
    /// terms; the default class when `key` names none of this loader's).
    public func request(adUnitID: String, consentClass: String? = nil) -> AdRequest {
        let name = consentClass ?? consent.defaultClass
        let terms = consent.classes.first { $0.name == name }?.terms ?? ConsentTerms()
        var request = AdRequest(
            adUnitID: adUnitID, format: format, keywords: keywords, contentURL: contentURL,
            nonPersonalized: nonPersonalized, targeting: targeting, consentClass: name, consent: terms)
        request.usableLife = lifetime
        request.bidFloor = bidFloor
        request.bidFloorCurrency = bidFloorCurrency
        return request
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
        if let minimumRemainingLife, minimumRemainingLife >= lifetime {
            throw fail(
                "minimumRemainingLife",
                "must be below lifetime (\(lifetime.milliseconds) ms), got \(minimumRemainingLife.milliseconds) ms")
        }
        if stockCover < .zero { throw fail("stockCover", "must not be negative") }
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
        try consent.validate(prefix: "loaders.\(name).consent")
        if let bidFloor, !(bidFloor >= 0 && bidFloor.isFinite) {
            throw fail("bidFloor", "must be a non-negative number")
        }
        if let currency = bidFloorCurrency,
            currency.utf8.count != 3 || !currency.utf8.allSatisfy({ (65...90).contains($0) })
        {
            throw fail("bidFloorCurrency", "must be an ISO 4217 code such as USD, got \"\(currency)\"")
        }
        try placement.validate(prefix: "loaders.\(name).placement")
        try separation.validate(prefix: "loaders.\(name).separation")
        if !(1...10_000_000).contains(maximumFeeds) {
            throw fail("feeds.maximum", "must be 1...10000000, got \(maximumFeeds)")
        }
        if let idle = configuredFeedIdleTimeout, idle <= .zero { throw fail("feeds.idleTimeout", "must be positive") }
        if let idle = configuredFeedIdleTimeout, idle > leaseTimeout {
            throw fail(
                "feeds.idleTimeout",
                "must be at most leaseTimeout (\(leaseTimeout.milliseconds / 1000) s): a feed's leases would be reclaimed while it is kept, got \(idle.milliseconds / 1000) s"
            )
        }
    }
}
