/// The pool store in Stats (PROTOCOL.md 7.4, 9.1): what this run got back from the last one,
/// every loader together, and the journal's work since the start.
public struct PoolStoreStats: Hashable, Sendable {
    /// Where the restore came from: "suspension" (a clean stop), "journal" (a crash), "" (nothing).
    public var restoredFrom = ""
    /// Ads back in their pools (leased ones included).
    public var restoredAds: UInt64 = 0
    /// Leases back.
    public var restoredLeases: UInt64 = 0
    /// Ads and leased ads that expired while the daemon was down.
    public var expiredWhileDown: UInt64 = 0
    /// Leases whose timeout passed while down (their ads back in the pool).
    public var reclaimedLeases: UInt64 = 0
    /// Ads not restored for another reason (their loader gone or changed).
    public var droppedAds: UInt64 = 0
    /// Ads of the journal that did not decode: dropped, never lent.
    public var uncertainAds: UInt64 = 0
    /// From the last write of the previous run to this start.
    public var downMilliseconds: Int64 = 0
    /// The restore's own time.
    public var restoreMilliseconds: Int64 = 0
    /// The journal file's size now.
    public var journalBytes: UInt64 = 0
    /// Journal writes since the start.
    public var journalCommits: UInt64 = 0
    /// Journal checkpoints since the start.
    public var journalCheckpoints: UInt64 = 0
    /// Journal and store writes that failed since the start.
    public var writeFailures: UInt64 = 0

    public init() {}
}
