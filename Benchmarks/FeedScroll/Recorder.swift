/// Collects what one strategy did with the trace: appearances, when each got its ad, and
/// the strategy's upstream counters at the start and end of the measurement window.
final class Recorder {
    /// Appearances at or after this virtual time (ms since the start) are measured.
    let warmup: Int64
    private(set) var appearedAt: [Int64] = []
    /// Virtual ms from appearance to ad, or `Int64.max` when the cell never had one while visible.
    private(set) var delays: [Int64] = []
    /// A new ad was displayed (an impression), versus the same ad again after a scroll-back.
    private(set) var impressions = 0
    private(set) var reviews = 0
    /// Measured impressions (fresh ads displayed) per virtual minute since the start.
    private(set) var impressionsPerMinute: [Int: Int] = [:]

    init(warmup: Int64) {
        self.warmup = warmup
    }

    /// An ad cell appeared at `time`; returns its appearance index.
    func appear(at time: Int64) -> Int {
        appearedAt.append(time)
        delays.append(.max)
        return appearedAt.count - 1
    }

    /// Appearance `index` displays an ad at `time`; `newAd` when this ad was never shown in this cell.
    func display(_ index: Int, at time: Int64, newAd: Bool) {
        guard delays[index] == .max else { return }
        delays[index] = time - appearedAt[index]
        guard appearedAt[index] >= warmup else { return }
        if newAd {
            impressions += 1
            impressionsPerMinute[Int(time / 60_000), default: 0] += 1
        } else {
            reviews += 1
        }
    }
}

/// Cumulative upstream counters of a strategy.
struct UpstreamCounters {
    var requests = 0
    var loaded = 0
    /// Ads loaded and dropped without ever being shown (expired, or discarded by the client).
    var unshown = 0

    static func - (lhs: Self, rhs: Self) -> Self {
        Self(requests: lhs.requests - rhs.requests, loaded: lhs.loaded - rhs.loaded, unshown: lhs.unshown - rhs.unshown)
    }
}

/// One row of results.
struct StrategyResult {
    var strategy: String
    /// `maximumRetainedAdvertisements` for adloaderd, nil for the baselines.
    var retained: Int?
    var appearances = 0
    var hits = 0
    var never = 0
    var impressions = 0
    var reviews = 0
    var upstream = UpstreamCounters()
    var p50: Int64 = 0
    var p90: Int64 = 0
    var p99: Int64 = 0
    var peakLeased = 0
    var leftInPool = 0
    var leasesReclaimed = 0
    /// adloaderd: pools left at the end; requests for an ad unit more than the idle time
    /// after its last borrow; the most requests one unit had in flight during or after an
    /// outage.
    var poolsLeft = 0
    var requestsAfterIdle = 0
    var recoveryBurst = 0
    /// Sorted measured delays, for the CDF file.
    var sortedDelays: [Int64] = []
    /// Fresh ads displayed per second: over the measured window, and in its busiest minute.
    var freshPerSecond = 0.0
    var peakFreshPerSecond = 0.0
    /// adloaderd: mean upstream round trip (ms), ads per request, and mean requests in
    /// flight for the busiest ad unit over the measured window (how much of the cap is used).
    var meanRoundTrip = 0.0
    var adsPerRequest = 0.0
    var meanRequestsInFlight = 0.0
    /// The outage scenario, minute by minute (see `FeedScroll.outageReport`).
    var outage: String?
    /// adloaderd: the most ads loaded or in flight over every pool at a sample (the memory
    /// budget's measure), the highest in-flight target of the first ad unit, the time the
    /// pools were held back by a configured cap, and ads the memory budget refused.
    var peakAdsHeld = 0
    var peakInFlightTarget = 0
    var heldBackSeconds = 0.0
    var memoryRefused = 0
    /// Ads dropped to make room under the memory budget (``AdDropReason/memoryBudget``).
    var memoryDropped = 0
    /// Hits over the outage window alone (outage scenario).
    var outageHitRatio: Double?
    /// Calls to the service after the warm-up (Borrow and Return, or Plan and Return) and
    /// screens (viewport positions) in that window: traces with scroll events only.
    var calls = 0
    var screens = 0
    /// The plan mode's figures.
    var plan: PlanFigures?
    /// Ads placed in one feed closer than the separation rules allow, checked over the
    /// displayed ads of each session (per-cell Borrow keeps nothing apart).
    var separationBreaches = 0

    var requestsPerImpression: Double { impressions == 0 ? .infinity : Double(upstream.requests) / Double(impressions) }
    var hitRatio: Double { appearances == 0 ? 0 : Double(hits) / Double(appearances) }
    var neverRatio: Double { appearances == 0 ? 0 : Double(never) / Double(appearances) }
    var unshownRatio: Double { upstream.loaded == 0 ? 0 : Double(upstream.unshown) / Double(upstream.loaded) }

    init(strategy: String, retained: Int?, recorder: Recorder, upstream: UpstreamCounters) {
        self.strategy = strategy
        self.retained = retained
        self.upstream = upstream
        var measured: [Int64] = []
        for (index, time) in recorder.appearedAt.enumerated() where time >= recorder.warmup {
            measured.append(recorder.delays[index])
        }
        measured.sort()
        appearances = measured.count
        hits = measured.prefix { $0 == 0 }.count
        never = measured.reversed().prefix { $0 == .max }.count
        impressions = recorder.impressions
        reviews = recorder.reviews
        p50 = Self.percentile(measured, 0.50)
        p90 = Self.percentile(measured, 0.90)
        p99 = Self.percentile(measured, 0.99)
        sortedDelays = measured
        let end = recorder.appearedAt.last ?? recorder.warmup
        let window = Double(max(1, end - recorder.warmup)) / 1_000
        freshPerSecond = Double(impressions) / window
        peakFreshPerSecond = Double(recorder.impressionsPerMinute.values.max() ?? 0) / 60
    }

    /// Nearest-rank percentile; `Int64.max` means "never had an ad while visible".
    static func percentile(_ sorted: [Int64], _ fraction: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
