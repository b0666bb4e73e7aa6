/// Counters a demand source keeps of its own work (requests, no-fills, dropped bids, notices),
/// reported in Stats next to the pools. Sources that keep none report nothing
/// (``DemandSource/statistics`` is nil).
public struct DemandSourceStats: Hashable, Sendable {
    /// The source's name in the configuration (filled in by the loader).
    public var name: String
    /// Upstream requests sent.
    public var requests: UInt64 = 0
    /// Requests answered without any usable ad (204, no bids, every bid dropped).
    public var noFills: UInt64 = 0
    /// Ads delivered.
    public var bids: UInt64 = 0
    /// Bids dropped as unusable (a required asset missing, bad markup, ...).
    public var bidsDropped: UInt64 = 0
    /// ``bidsDropped`` by a short reason name (the `reason` label of
    /// `adloader_source_bids_dropped_total`: the OpenRTB source's names its loss reason codes,
    /// each listed, zeros included). Metrics only: Stats' wire message does not carry it.
    public var bidsDroppedByReason: [String: UInt64] = [:]
    /// Requests that failed.
    public var failures: UInt64 = 0
    /// Win, billing and loss notices delivered (answered 200 or 204).
    public var noticesSent: UInt64 = 0
    /// Notices given up after their last try.
    public var noticesFailed: UInt64 = 0
    /// Tries after a first one.
    public var noticesRetried: UInt64 = 0
    /// Notices left undelivered by the previous run, sent again at start.
    public var noticesRestored: UInt64 = 0
    /// Notices in flight or waiting for their next try now.
    public var noticesPending: UInt64 = 0
    /// Notices not sent: the notice queue was full, or the source was closing.
    public var noticesDropped: UInt64 = 0
    /// Notices the previous run left under way (a crash or a stop during a try): never sent
    /// again, since the try may have reached the exchange.
    public var noticesUncertain: UInt64 = 0

    public init(name: String = "") { self.name = name }
}
