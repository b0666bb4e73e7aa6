/// Where ads come from: asked for 1...5 ads with a loader's request, answers later.
///
/// The request names the ``AdFormat`` wanted: a source answers with creatives of that kind
/// (native assets for a native loader, full-screen creatives for the others); an ad that
/// does not fit is dropped by the loader as ``AdDropReason/invalidated``.
///
/// - Important: `loadAds` is called on the loader's thread and `completion` must be called
///   exactly once, on that same thread, and not from inside `loadAds` itself. A source may
///   deliver fewer ads than asked (partial fill), including none.
public protocol DemandSource: AnyObject {
    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void)
}
