/// A configured cap that holds a pool below what its demand asks for. Every one is visible:
/// Stats `held_back`, the metric `adloader_pool_held_back`, a Watch event `held_back` when a
/// pool starts or stops being held back, and a rate-limited warning log naming ``setting``.
public enum HoldBack: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The pool's ceiling, `loaders.NAME.maximumConcurrentRequests`, is below its demand's
    /// in-flight target.
    case poolCeiling
    /// The source's request-rate budget, `sources.NAME.maximumRequestsPerSecond`, made the
    /// pool wait for a token.
    case sourceBudget
    /// The daemon-wide memory budget, `limits.maximumAds`, left no room for the pool's top-up.
    case memoryBudget

    /// The wire and metric name.
    public var name: String {
        switch self {
        case .poolCeiling: "pool_ceiling"
        case .sourceBudget: "source_budget"
        case .memoryBudget: "memory_budget"
        }
    }

    /// The configuration key to change, with `loader` and `source` filled in.
    public func setting(loader: String, source: String) -> String {
        switch self {
        case .poolCeiling: "loaders.\(loader).maximumConcurrentRequests"
        case .sourceBudget: "sources.\(source).maximumRequestsPerSecond"
        case .memoryBudget: "limits.maximumAds"
        }
    }

    public var description: String { name }
}
