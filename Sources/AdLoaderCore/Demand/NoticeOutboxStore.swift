/// One notice (a win, billing or loss URL) not yet delivered: what a ``NoticeOutboxStore``
/// keeps so that a restart sends it, once.
public struct OutboxNotice: Hashable, Sendable {
    /// Unique within its source, across restarts (the sender continues after the highest stored).
    public var id: UInt64
    /// The URL, macros substituted: fired as is.
    public var url: String
    /// Attempts made so far (each a GET that ended without a 200 or 204).
    public var attempts: Int
    /// The device of the show a billing notice is for, forwarded as headers; empty for other
    /// notices and when the Return named none. Stored with the notice, so a notice sent after
    /// a restart carries the same headers as its first try.
    public var device: ImpressionDevice
    /// A try was under way when this was stored: the exchange may have it already. A notice
    /// a previous run left in this state is never sent again (it could be counted twice);
    /// it is reported as uncertain instead.
    public var sending: Bool

    public init(
        id: UInt64, url: String, attempts: Int = 0, device: ImpressionDevice = ImpressionDevice(), sending: Bool = false
    ) {
        self.id = id
        self.url = url
        self.attempts = attempts
        self.device = device
        self.sending = sending
    }
}

/// Where undelivered notices are kept across restarts (the pool store's outbox table): a
/// notice is put, marked ``OutboxNotice/sending``, before each attempt, put again unmarked
/// when the attempt failed, and removed once it is delivered or given up. A stop or a crash
/// between attempts sends it again at the next start; one during an attempt (the exchange
/// may have counted it) leaves it marked, and the next start reports it and never sends it:
/// at most once, never twice.
///
/// Writes are synchronous and durable across a process kill when they return (SQLite WAL);
/// a write that fails is reported by the store's own log and the notice goes on in memory.
///
/// - Important: loop-confined, like the sources that use it.
public protocol NoticeOutboxStore: AnyObject {
    /// The notices of `source` left by the previous run, in id order.
    func pendingNotices(source: String) -> [OutboxNotice]
    /// Records `notice` (or its new attempt count).
    func putNotice(_ notice: OutboxNotice, source: String)
    /// Forgets a notice: delivered, or given up.
    func removeNotice(id: UInt64, source: String)
}
