import AdLoaderCore

/// A what-if, not adloaderd's behaviour: a demand source adapter that always asks its
/// upstream for whole batches and keeps the surplus for the pool's next asks.
///
/// The loader tops a pool up after every borrow, so at steady traffic it asks for one ad at
/// a time and `numberOfAdvertisements` never batches. Wrapping the source with this adapter
/// shows what a loader that only sends whole batches (a low-water mark) would achieve, without
/// touching the core. Surplus ads carry their expiry (`sourceExpiry`) from the moment they
/// were loaded upstream, so they age honestly while they wait here.
final class WholeBatchSource: DemandSource {
    private let upstream: any DemandSource
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private let batch: Int
    private let lifetime: Duration
    private var surplus: [NativeAdContent] = []
    private(set) var upstreamRequests = 0
    private(set) var loaded = 0
    /// Surplus ads that expired before the pool asked for them.
    private(set) var expiredHere = 0

    init(upstream: any DemandSource, clock: any AdClock, scheduler: any AdScheduler, batch: Int, lifetime: Duration) {
        self.upstream = upstream
        self.clock = clock
        self.scheduler = scheduler
        self.batch = batch
        self.lifetime = lifetime
    }

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[NativeAdContent], UpstreamError>) -> Void
    ) {
        dropExpired()
        if surplus.count >= count {
            let ads = Array(surplus.prefix(count))
            surplus.removeFirst(count)
            _ = scheduler.schedule(at: clock.now) { completion(.success(ads)) }
            return
        }
        upstreamRequests += 1
        upstream.loadAds(request, count: batch) { [self] result in
            switch result {
            case .success(let ads):
                loaded += ads.count
                let expiry = clock.now + lifetime
                dropExpired()
                surplus += ads.map { ad in
                    var ad = ad
                    ad.sourceExpiry = expiry
                    return ad
                }
                let delivered = Array(surplus.prefix(count))
                surplus.removeFirst(delivered.count)
                completion(.success(delivered))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    private func dropExpired() {
        let now = clock.now
        let before = surplus.count
        surplus.removeAll { ($0.sourceExpiry ?? now) <= now }
        expiredHere += before - surplus.count
    }
}
