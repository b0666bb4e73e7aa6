package import AdLoaderCore
package import AdLoaderMetrics
import AdLoaderUV

/// Wraps a configured demand source to measure it from the outside, so the core needs no
/// metrics of its own: upstream requests, ads received, failures by ``UpstreamError/Code``,
/// request latency, notices (shows and unshown drops) and whether the source answers at all.
///
/// Reachability follows the loader's own rule: a source is unreachable from an answer with
/// ``UpstreamError/Code/unreachable`` until any other answer (a success or another error shows
/// it answers; the loader probes meanwhile). A source never asked counts as reachable.
///
/// - Important: loop-confined, like the source it wraps.
package final class MeasuredDemandSource: DemandSource {
    /// Failure classes, in ``failures`` order.
    package static let failureClasses: [UpstreamError.Code] = [.retryable, .unreachable, .final]
    /// Notice kinds, in ``notices`` order: a show, then each reason of an unshown drop.
    package static let noticeKinds = [
        "shown", "expired", "disabled", "shutdown", "invalidated", "reconfigured", "memory_budget",
    ]

    package let name: String
    private let wrapped: any DemandSource
    package private(set) var requests: UInt64 = 0
    package private(set) var adsAsked: UInt64 = 0
    package private(set) var adsReceived: UInt64 = 0
    package private(set) var failures: [UInt64] = [0, 0, 0]
    package private(set) var notices: [UInt64] = [0, 0, 0, 0, 0, 0, 0]
    package private(set) var inFlight = 0
    package private(set) var isReachable = true
    /// Whether any request was answered yet.
    package private(set) var hasAnswered = false
    package let latency = Histogram(bounds: Histogram.latencySeconds)
    /// Called with every answer (and the count asked for), after the counters took it and
    /// before the loader sees it: the daemon's failure warnings and readiness log.
    package var onAnswer: ((Result<[DeliveredAd], UpstreamError>, Int) -> Void)?

    package init(name: String, wrapping source: any DemandSource) {
        self.name = name
        wrapped = source
    }

    package func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        requests += 1
        adsAsked += UInt64(count)
        inFlight += 1
        let started = UVLoop.highResolutionNanoseconds
        wrapped.loadAds(request, count: count) { [weak self] result in
            self?.answered(result, started: started)
            self?.onAnswer?(result, count)
            completion(result)
        }
    }

    /// The wrapped source's own counters (Stats' per-source table), passed through.
    package var statistics: DemandSourceStats? { wrapped.statistics }

    package func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? {
        wrapped.restoreContext(from: state, for: ad)
    }

    package func adShown(_ ad: Ad) { adShown(ad, device: ImpressionDevice()) }

    package func adShown(_ ad: Ad, device: ImpressionDevice) {
        notices[0] += 1
        wrapped.adShown(ad, device: device)
    }

    package func adDropped(_ ad: Ad, reason: AdDropReason) {
        let index: Int
        switch reason {
        case .expired: index = 1
        case .disabled: index = 2
        case .shutdown: index = 3
        case .invalidated: index = 4
        case .reconfigured: index = 5
        case .memoryBudget: index = 6
        case .consumed: index = 0  // never sent (the protocol says so); counted with shows
        }
        notices[index] += 1
        wrapped.adDropped(ad, reason: reason)
    }

    private func answered(_ result: Result<[DeliveredAd], UpstreamError>, started: UInt64) {
        inFlight -= 1
        hasAnswered = true
        latency.observe(Double(UVLoop.highResolutionNanoseconds &- started) / 1e9)
        switch result {
        case .success(let ads):
            adsReceived += UInt64(ads.count)
            isReachable = true
        case .failure(let error):
            if let index = Self.failureClasses.firstIndex(of: error.code) { failures[index] += 1 }
            isReachable = error.code != .unreachable
        }
    }
}
