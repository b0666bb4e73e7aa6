/// Where ads come from: asked for 1...5 ads with a loader's request, answers later.
///
/// The request names the ``AdFormat`` wanted: a source answers with creatives of that kind
/// (native assets for a native loader, full-screen creatives for the others); an ad that
/// does not fit is dropped by the loader as ``AdDropReason/invalidated``.
///
/// The loader tells the source what became of its ads: ``adShown(_:)`` for every show,
/// ``adDropped(_:reason:)`` for an ad let go without ever being shown, each with the ad and
/// its ``Ad/sourceContext`` (an exchange's win, billing and loss notices hang on these). Both
/// have no-op defaults, so a source that does not care implements `loadAds` only.
///
/// - Important: `loadAds` is called on the loader's thread and `completion` must be called
///   exactly once, on that same thread, and not from inside `loadAds` itself. A source may
///   deliver fewer ads than asked (partial fill), including none. Notices are called on the
///   loader's thread, synchronously, once the loader's state is settled and the event is
///   delivered to observers; a source records or sends them (e.g. queues an HTTP request)
///   and does not call the loader from inside them.
public protocol DemandSource: AnyObject {
    /// Asks for `count` ads (1...5) for `request`; answers through `completion`, later.
    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void)

    /// One of this source's ads was shown: called for every shown return of a lease, after
    /// `ad.showCount` counted the show, so `ad.showCount == 1` is its first impression (where
    /// a source that bills once fires its win or billing notice). The ad may be consumed by
    /// this show or go back to the pool for more.
    func adShown(_ ad: Ad)

    /// ``adShown(_:)`` with the device the client's shown Return named (empty when it named
    /// none, or for a show the loader counted without a Return of its own): what a source
    /// forwards with its billing notice. The loader calls this one; its default calls
    /// ``adShown(_:)``, so a source that needs no device implements that alone.
    func adShown(_ ad: Ad, device: ImpressionDevice)

    /// One of this source's ads was dropped without ever being shown (`ad.showCount == 0`):
    /// `.expired` (in the pool, on arrival, or when an unshown lease ended after its expiry),
    /// `.disabled` or `.shutdown` (its loader was), `.invalidated` (its creative does not fit
    /// the loader's format). Never `.consumed`, and never for an ad shown before: that source
    /// was told by ``adShown(_:)``. Called at most once per ad.
    func adDropped(_ ad: Ad, reason: AdDropReason)

    /// The source's own counters for Stats, or nil when it keeps none. Read on the loader's
    /// thread; the loader fills in ``DemandSourceStats/name``.
    var statistics: DemandSourceStats? { get }
    /// Rebuilds the context of a restored ad from what its context gave as
    /// ``AdSourceContext/snapshotState``; nil: the ad is restored without one. Called on the
    /// loader's thread by ``NativeAdvertisementLoader/restore(_:)``, `ad` without its context.
    func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)?
}

extension DemandSource {
    /// Does nothing: a source that does not care about impressions needs nothing.
    public func adShown(_ ad: Ad) {}

    /// Calls ``adShown(_:)``: the device is not needed.
    public func adShown(_ ad: Ad, device: ImpressionDevice) { adShown(ad) }

    /// Does nothing: a source that does not care about losses needs nothing.
    public func adDropped(_ ad: Ad, reason: AdDropReason) {}

    /// None: a source without counters of its own is not listed in Stats.
    public var statistics: DemandSourceStats? { nil }
    /// None: a source that keeps no state restores ads without a context.
    public func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? { nil }
}
