/// What a demand source keeps with each of its ads for later: a price, notice URLs, a bid id.
///
/// A source attaches one to an ad it delivers (``DeliveredAd/context``); the loader keeps it
/// with the ad (``Ad/sourceContext``) and hands it back unread in the source's notices
/// (``DemandSource/adShown(_:)``, ``DemandSource/adDropped(_:reason:)``). It never goes on
/// the wire and is never shown to clients.
///
/// Adopt it with a final class of immutable (`let`) fields, e.g.
/// `final class BidContext: AdSourceContext { let price: Double; let winURL: String; ... }`.
/// Ads compare their contexts by identity.
public protocol AdSourceContext: AnyObject, Sendable {
    /// What a ``PoolSnapshot`` keeps of this context, as bytes the source reads back in
    /// ``DemandSource/restoreContext(from:for:)`` (e.g. an encoded price and notice URLs); nil
    /// (the default): nothing, the restored ad has no context.
    var snapshotState: [UInt8]? { get }
}

extension AdSourceContext {
    /// Nothing to keep: an ad restored from a snapshot has no context.
    public var snapshotState: [UInt8]? { nil }
}
