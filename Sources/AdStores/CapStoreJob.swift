public import AdLoaderCore

/// One cap-store call as data: what ``SQLiteCapStore/apply(_:)`` runs in a batch, and what
/// ``BackgroundCapStore`` hands its worker thread.
public struct CapStoreJob: Hashable, Sendable {
    public var key: CapKey
    public var now: AdInstant
    public var sessionTimeout: Duration
    /// true for ``CapStore/confirmShow(for:at:sessionTimeout:completion:)``, false for counts.
    public var increment: Bool

    public init(key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool) {
        self.key = key
        self.now = now
        self.sessionTimeout = sessionTimeout
        self.increment = increment
    }
}
