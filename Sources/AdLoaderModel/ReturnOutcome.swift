/// What happened to an ad when its lease ended.
public enum ReturnOutcome: Hashable, Sendable {
    case backInPool
    case consumed
    case expired
    case removed
    /// Returned with `invalidate`: dropped, and its creative blocked for the loader's
    /// ``LoaderConfiguration/invalidationBlockTime``.
    case invalidated
}
