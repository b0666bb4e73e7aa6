/// Where ads come from: asked for 1...5 ads with a loader's request, answers later.
///
/// - Important: `loadAds` is called on the loader's thread and `completion` must be called
///   exactly once, on that same thread, and not from inside `loadAds` itself. A source may
///   deliver fewer ads than asked (partial fill), including none.
public protocol DemandSource: AnyObject {
    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[NativeAdContent], UpstreamError>) -> Void)
}
