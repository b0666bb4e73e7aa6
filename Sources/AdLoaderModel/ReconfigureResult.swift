/// What ``NativeAdvertisementLoader/reconfigure(loaders:)`` did, by loader name (each list
/// sorted).
public struct ReconfigureResult: Hashable, Sendable {
    /// New loaders (no pools yet).
    public var added: [String] = []
    /// Loaders gone: their ads dropped (reason "reconfigured"), their leases kept until they end.
    public var removed: [String] = []
    /// Changed loaders whose pools and leases were kept (sizing, caps, timeouts, lifetime,
    /// retry, app-open, invalidation and `enabled` changes).
    public var changedKeepingPools: [String] = []
    /// Changed loaders whose pools were dropped (source, format or upstream request changed):
    /// as removed and added again.
    public var changedDroppingPools: [String] = []
    /// Loaders whose configuration did not change.
    public var unchanged: [String] = []

    public init() {}

    /// Whether anything changed.
    public var changedAnything: Bool {
        !(added.isEmpty && removed.isEmpty && changedKeepingPools.isEmpty && changedDroppingPools.isEmpty)
    }
}
