/// Counters of one OpenRTB source since it started.
public struct OpenRTBStats: Hashable, Sendable {
    /// BidRequests sent, answered or still in flight, less those that turned out never to
    /// have left (``unsent``): the exchange could have received each.
    public var requests: UInt64 = 0
    /// BidRequests that failed before any byte went out (connecting, name resolution): not
    /// counted in ``requests``; counted in ``failures``.
    public var unsent: UInt64 = 0
    /// Answered 204, `{}`, an empty `seatbid`, an `nbr`, or with every bid dropped.
    public var noFills: UInt64 = 0
    /// Bids turned into ads.
    public var bids: UInt64 = 0
    /// Bids dropped: a required asset missing, bad markup, an unknown impression, outbid.
    public var bidsDropped: UInt64 = 0
    /// ``bidsDropped`` by the OpenRTB loss reason code each bid's loss notice gets (``LossReason``).
    public var bidsDroppedByCode: [Int: UInt64] = [:]
    /// Requests that failed (transport, HTTP status, malformed body).
    public var failures: UInt64 = 0
    /// Win/billing and loss notices answered 200 or 204.
    public var noticesSent: UInt64 = 0
    /// Notices given up: every try (``Configuration/noticeAttempts``) failed or was answered
    /// with another status.
    public var noticesFailed: UInt64 = 0
    /// Tries after a first one (a notice not answered 200 or 204, tried again).
    public var noticesRetried: UInt64 = 0
    /// Notices a previous run left undelivered in the notice store, sent again at start.
    public var noticesRestored: UInt64 = 0
    /// Notices the previous run left during a try: not sent again (the exchange may have them).
    public var noticesUncertain: UInt64 = 0
    /// Notices in flight or waiting for their next try now.
    public var noticesPending: UInt64 = 0
    /// Notices not sent because the queue was full (or the source closed).
    public var noticesDropped: UInt64 = 0

    public init() {}
}
