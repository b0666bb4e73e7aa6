/// Why the loader let go of an ad for good.
///
/// Every ad that leaves a pool (other than by being lent) leaves for one of these reasons,
/// and each reason is counted in exactly one ``PoolStats`` counter: `expired`, `consumed`,
/// or `removed` for the rest.
public enum AdDropReason: Hashable, Sendable, CaseIterable {
    /// It reached its expiry (the loader's lifetime or the source's own expiry) unconsumed:
    /// in the pool, on arrival, or when its lease ended.
    case expired
    /// It was shown `showCountThreshold` times.
    case consumed
    /// Its loader was disabled (or it arrived for a disabled loader).
    case disabled
    /// The loader shut down (or it arrived after shutdown).
    case shutdown
    /// It cannot be served: the source sent a creative that does not fit the loader's format,
    /// or a client invalidated its creative (a Return with `invalidate`: that ad, the loader's
    /// other ads of the creative, and ads of it arriving while it is blocked).
    case invalidated
    /// A configuration reload removed its loader, or changed its source, format or request.
    case reconfigured
    /// The daemon-wide memory budget (`limits.maximumAds`) was full and a pool with demand
    /// needed room: the loader dropped it, unleased, from an idle pool first (soonest expiry
    /// first), else from a pool stocked beyond its own demand target.
    case memoryBudget
}
