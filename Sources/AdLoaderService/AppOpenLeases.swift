import AdLoaderCore

/// The leases lent by AppOpen calls, by lease id: whose counts a shown Return moves.
///
/// An entry ends with its lease's Return. A lease the loader reclaims (never returned) leaves
/// its entry behind until the entry's lease deadline passes; such entries are dropped as the
/// table grows, so it stays bounded by the leases open within one lease timeout.
///
/// - Important: loop-confined.
struct AppOpenLeases {
    struct Entry {
        var loader: String
        var deviceID: String
        var sessionID: String
        var utcOffsetSeconds: Int
        var sessionTimeout: Duration
        var leaseExpiresAt: AdInstant
    }

    private var entries: [UInt64: Entry] = [:]
    private var pruneAt = 1_024

    var count: Int { entries.count }

    subscript(leaseID: UInt64) -> Entry? { entries[leaseID] }

    mutating func insert(_ entry: Entry, leaseID: UInt64, now: AdInstant) {
        entries[leaseID] = entry
        if entries.count >= pruneAt {
            entries = entries.filter { $0.value.leaseExpiresAt > now }
            pruneAt = max(1_024, 2 * entries.count)
        }
    }

    @discardableResult
    mutating func remove(_ leaseID: UInt64) -> Entry? { entries.removeValue(forKey: leaseID) }
}
