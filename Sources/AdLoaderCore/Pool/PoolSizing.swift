/// How a pool decides how many ads to keep loaded (``LoaderConfiguration/sizing``).
public enum PoolSizing: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The pool's target follows its measured demand (see ``DemandEstimate``), bounded by
    /// ``LoaderConfiguration/maximumRetainedAdvertisements``. The default.
    case demand
    /// The pool tops up to ``LoaderConfiguration/maximumRetainedAdvertisements``, whatever the
    /// traffic: right for one known traffic level.
    case fixed

    /// The configuration name: "demand" or "fixed".
    public var name: String {
        switch self {
        case .demand: "demand"
        case .fixed: "fixed"
        }
    }

    public var description: String { name }
}
