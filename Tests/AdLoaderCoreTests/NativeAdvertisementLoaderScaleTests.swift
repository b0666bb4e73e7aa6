import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// Hot paths must not scan the pool: their cost at 100,000 retained ads stays close to the
/// cost at 1,000 (O(log n)), where a scan would make it about 100 times larger.
struct NativeAdvertisementLoaderScaleTests {
    /// Answers every request at once, in bulk, without per-request bookkeeping.
    final class BulkSource: DemandSource {
        var completions: [(count: Int, completion: (Result<[NativeAdContent], UpstreamError>) -> Void)] = []
        func loadAds(
            _ request: AdRequest, count: Int, completion: @escaping (Result<[NativeAdContent], UpstreamError>) -> Void
        ) { completions.append((count, completion)) }

        func answerAll(start: AdInstant) {
            let pending = completions
            completions.removeAll()
            for (index, request) in pending.enumerated() {
                // Spread expiries so the heap is not degenerate.
                let expiry = start + .seconds(600) + .milliseconds(Int64(index % 997))
                request.completion(
                    .success(Array(repeating: NativeAdContent(headline: "h", sourceExpiry: expiry), count: request.count)))
            }
        }
    }

    static func filledLoader(size: Int) throws -> (NativeAdvertisementLoader, ManualClock) {
        let clock = ManualClock()
        let source = BulkSource()
        var configuration = LoaderConfiguration()
        configuration.source = "bulk"
        configuration.maximumRetainedAdvertisements = size
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["bulk": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u")
        source.answerAll(start: clock.now)
        return (loader, clock)
    }

    /// Best-of-three time for `operations` borrow + unshown return pairs and no-op sweeps.
    static func hotPathTime(size: Int, operations: Int) throws -> Duration {
        let (loader, clock) = try filledLoader(size: size)
        #expect(loader.stats().first?.available == size)
        var best = Duration.seconds(1_000)
        for _ in 0..<3 {
            let elapsed = try ContinuousClock().measure {
                for index in 0..<operations {
                    var lease: Lease?
                    try loader.borrow(adUnitID: "u", slot: index % 2 == 0 ? "s" : nil) {
                        if case .leased(let l, _) = $0 { lease = l }
                    }
                    guard let lease else { throw TestFailure("no lease at \(size)") }
                    try loader.returnLease(lease.id, shown: false)
                    try loader.prefetch(adUnitID: "u")  // purges expired (none) and tops up (nothing)
                }
                clock.advance(by: .seconds(60))  // one no-op sweep
            }
            best = min(best, elapsed)
        }
        return best
    }

    @Test func borrowReturnAndSweepDoNotScanThePool() throws {
        let small = try Self.hotPathTime(size: 1_000, operations: 2_000)
        let large = try Self.hotPathTime(size: 100_000, operations: 2_000)
        // O(log n) predicts a ratio near 1.7; a full scan, about 100.
        #expect(large < small * 15, "1,000 ads: \(small), 100,000 ads: \(large)")
    }
}
