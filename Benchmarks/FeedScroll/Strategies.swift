import AdLoaderCore
import AdLoaderTestSupport
import AdSources

/// A way for a feed backend to put ads into ad cells, driven by the trace events.
///
/// Every strategy gets its own ``ManualClock`` and its own ``SyntheticSource`` with the same
/// configuration and seed, so they face the same upstream and the same users.
protocol FeedStrategy: AnyObject {
    var name: String { get }
    var counters: UpstreamCounters { get }
    func appear(key: Int64, user: Int32, cell: Int32, unit: Int32)
    func disappear(key: Int64)
    func release(key: Int64)
    /// The viewport of `user` moved (or its session started): `top` is its first cell. Only
    /// in traces with ``TraceParameters/scrolls``.
    func scroll(user: Int32, top: Int32, unit: Int32)
    /// Called now and then to record gauges (peak leased ads).
    func sample()
    func finish(into result: inout StrategyResult)
}

extension FeedStrategy {
    func scroll(user: Int32, top: Int32, unit: Int32) {}
}

/// Shared by the strategies: the virtual time and the recorder.
class StrategyBase {
    let clock: ManualClock
    let start: AdInstant
    let recorder: Recorder
    let request = AdRequest(adUnitID: FeedScroll.adUnitID)

    init(clock: ManualClock, recorder: Recorder) {
        self.clock = clock
        self.start = clock.now
        self.recorder = recorder
    }

    /// Virtual milliseconds since the start of the run.
    var elapsed: Int64 { clock.now.unixMilliseconds - start.unixMilliseconds }
}

/// (a) One upstream request for one ad at every appearance of an ad cell; nothing is kept.
final class NoReuseStrategy: StrategyBase, FeedStrategy {
    let name = "no-reuse"
    private let source: SyntheticSource
    private(set) var counters = UpstreamCounters()
    /// The appearance currently on screen, per cell.
    private var visible: [Int64: Int] = [:]

    init(clock: ManualClock, recorder: Recorder, source: SyntheticSource) {
        self.source = source
        super.init(clock: clock, recorder: recorder)
    }

    func appear(key: Int64, user: Int32, cell: Int32, unit: Int32) {
        let appearance = recorder.appear(at: elapsed)
        visible[key] = appearance
        counters.requests += 1
        source.loadAds(request, count: 1) { [self] result in
            guard case .success(let ads) = result, !ads.isEmpty else { return }
            counters.loaded += ads.count
            if visible[key] == appearance {
                recorder.display(appearance, at: elapsed, newAd: true)
            } else {
                counters.unshown += ads.count  // the cell is gone; its answer is thrown away
            }
        }
    }

    func disappear(key: Int64) { visible[key] = nil }
    func release(key: Int64) {}
    func sample() {}
    func finish(into result: inout StrategyResult) {}
}

/// (b) Slot affinity without prefetch: a cell keeps its ad while the feed keeps the cell's
/// state (scroll-backs reuse it); an appearance without an ad asks upstream for one ad.
final class ReuseOnlyStrategy: StrategyBase, FeedStrategy {
    let name = "reuse-no-prefetch"
    private let source: SyntheticSource
    private let lifetime: Duration
    private(set) var counters = UpstreamCounters()

    private final class Slot {
        var expiresAt: AdInstant?
        var shown = false
        var pending = false
        var visibleAppearance: Int?
    }

    private var slots: [Int64: Slot] = [:]

    init(clock: ManualClock, recorder: Recorder, source: SyntheticSource, lifetime: Duration) {
        self.source = source
        self.lifetime = lifetime
        super.init(clock: clock, recorder: recorder)
    }

    func appear(key: Int64, user: Int32, cell: Int32, unit: Int32) {
        let slot = slots[key] ?? Slot()
        slots[key] = slot
        let appearance = recorder.appear(at: elapsed)
        slot.visibleAppearance = appearance
        if let expiresAt = slot.expiresAt, clock.now < expiresAt {
            recorder.display(appearance, at: elapsed, newAd: !slot.shown)
            slot.shown = true
            return
        }
        if slot.expiresAt != nil {
            if !slot.shown { counters.unshown += 1 }
            slot.expiresAt = nil
            slot.shown = false
        }
        guard !slot.pending else { return }
        slot.pending = true
        counters.requests += 1
        source.loadAds(request, count: 1) { [self] result in
            slot.pending = false
            guard case .success(let ads) = result, !ads.isEmpty else { return }
            counters.loaded += ads.count
            guard slots[key] === slot else {
                counters.unshown += ads.count  // released while loading
                return
            }
            slot.expiresAt = clock.now + lifetime
            slot.shown = false
            if let appearance = slot.visibleAppearance {
                recorder.display(appearance, at: elapsed, newAd: true)
                slot.shown = true
            }
        }
    }

    func disappear(key: Int64) { slots[key]?.visibleAppearance = nil }

    func release(key: Int64) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        if slot.expiresAt != nil && !slot.shown { counters.unshown += 1 }
    }

    func sample() {}
    func finish(into result: inout StrategyResult) {}
}

/// (c) adloaderd: one shared pool with prefetch, borrow with slot affinity (the cell's slot
/// key keeps its lease while the feed keeps the cell), auto-fill, and a borrow wait.
final class AdLoaderStrategy: StrategyBase, FeedStrategy {
    let loader: NativeAdvertisementLoader
    let wait: Duration
    let name = "adloaderd"
    private var peakLeased = 0

    private final class Cell {
        var appearance: Int?
        var parked: (any ParkedBorrow)?
        var leaseID: UInt64?
        var user: Int32?
        var position: Int?
    }

    private var cells: [Int64: Cell] = [:]
    /// Ads available in the pools when the upstream outage began (outage scenario).
    var availableAtOutage: Int?

    init(
        clock: ManualClock, recorder: Recorder, loader: NativeAdvertisementLoader, source: CountingSource,
        wait: Duration
    ) throws {
        self.loader = loader
        self.source = source
        self.wait = wait
        super.init(clock: clock, recorder: recorder)
        _ = loader.addObserver { [unowned self] event in
            switch event.kind {
            case .received: loaded += 1
            case .expired, .removed: unshown += event.reason == .consumed ? 0 : 1
            default: break
            }
        }
        try loader.prefetch(adUnitID: FeedScroll.adUnitID, loader: FeedScroll.loaderName)
    }

    var stats: PoolStats {
        loader.stats(loader: FeedScroll.loaderName, adUnitID: FeedScroll.adUnitID).first
            ?? PoolStats(loader: FeedScroll.loaderName, adUnitID: FeedScroll.adUnitID)
    }

    /// Counted from the source and the loader's events, so pools removed when idle still count.
    var counters: UpstreamCounters {
        UpstreamCounters(requests: source.requests, loaded: loaded, unshown: unshown)
    }

    let source: CountingSource
    private var loaded = 0
    private var unshown = 0

    /// Calls after the warm-up (Borrow, Return) and screens (viewport positions, in traces
    /// with scroll events).
    private var calls = 0
    private var screens = 0

    func scroll(user: Int32, top: Int32, unit: Int32) {
        if elapsed >= recorder.warmup { screens += 1 }
    }

    func appear(key: Int64, user: Int32, cell index: Int32, unit: Int32) {
        let cell = cells[key] ?? Cell()
        cells[key] = cell
        cell.user = user
        cell.position = Int(index)
        let appearance = recorder.appear(at: elapsed)
        if elapsed >= recorder.warmup { calls += 1 }
        cell.appearance = appearance
        source.lastDemand[FeedScroll.adUnitID(unit)] = clock.now
        let outcome: BorrowOutcome
        do {
            outcome = try loader.borrow(
                adUnitID: FeedScroll.adUnitID(unit), loader: FeedScroll.loaderName, slot: "u\(user)/c\(index)",
                wait: wait
            ) { [self, cell] result in
                cell.parked = nil
                served(cell, result)
            }
        } catch {
            fatalError("borrow failed: \(error)")
        }
        switch outcome {
        case .answered(let result): served(cell, result)
        case .parked(let handle): cell.parked = handle
        case .parkingRefused: fatalError("parking refused without a limit")
        }
    }

    /// When set (the plan comparison), each session's ads are checked against the loader's
    /// separation rules as if it were one planned feed: ``StrategyResult/separationBreaches``.
    var separation: SeparationRules?
    private var placed: [Int32: [Int: Ad]] = [:]
    private var breaches = 0

    private func served(_ cell: Cell, _ result: BorrowResult) {
        guard case .leased(let lease, let reused) = result else { return }
        if let separation, !reused, let user = cell.user, let position = cell.position {
            var ads = placed[user] ?? [:]
            if !SeparationCheck.allows(lease.ad, at: position, among: ads, separation) { breaches += 1 }
            ads[position] = lease.ad
            placed[user] = ads
        }
        cell.leaseID = lease.id
        if let appearance = cell.appearance {
            recorder.display(appearance, at: elapsed, newAd: !reused)
        }
    }

    func disappear(key: Int64) {
        guard let cell = cells[key] else { return }
        cell.parked?.cancel()
        cell.parked = nil
        cell.appearance = nil
    }

    func release(key: Int64) {
        guard let cell = cells.removeValue(forKey: key) else { return }
        cell.parked?.cancel()
        if let leaseID = cell.leaseID {
            // Every lease was lent while its cell was on screen, so its ad was shown.
            if elapsed >= recorder.warmup { calls += 1 }
            _ = try? loader.returnLease(leaseID, shown: true)
        }
    }

    private var peakAdsHeld = 0
    private var peakInFlightTarget = 0

    func sample() {
        let all = loader.stats(loader: FeedScroll.loaderName)
        peakLeased = max(peakLeased, all.reduce(0) { $0 + $1.leased })
        peakAdsHeld = max(peakAdsHeld, loader.adsHeld)
        if let first = all.first(where: { $0.adUnitID == FeedScroll.adUnitID }) {
            peakInFlightTarget = max(peakInFlightTarget, first.inFlightTarget)
        }
    }

    func finish(into result: inout StrategyResult) {
        let all = loader.stats(loader: FeedScroll.loaderName)
        result.peakLeased = peakLeased
        result.leftInPool = all.reduce(0) { $0 + $1.available }
        result.leasesReclaimed = all.reduce(0) { $0 + Int($1.leasesReclaimed) }
        result.poolsLeft = all.count
        result.requestsAfterIdle = source.requestsAfterIdle
        result.recoveryBurst = source.recoveryBurst
        result.meanRoundTrip = source.answered == 0 ? 0 : Double(source.roundTripMilliseconds) / Double(source.answered)
        result.adsPerRequest = source.answered == 0 ? 0 : Double(source.adsAnswered) / Double(source.answered)
        result.meanRequestsInFlight = source.meanInFlight
        result.peakAdsHeld = peakAdsHeld
        result.peakInFlightTarget = peakInFlightTarget
        result.heldBackSeconds = all.reduce(0.0) { $0 + Double($1.heldBackMilliseconds) / 1_000 }
        result.memoryRefused = all.reduce(0) { $0 + Int($1.budgetRefused) }
        result.memoryDropped = all.reduce(0) { $0 + Int($1.droppedForMemory) }
        result.calls = calls
        result.screens = screens
        result.separationBreaches = breaches
    }
}

/// The upstream seen by adloaderd in the simulation: the synthetic source, counted per ad
/// unit, with an optional outage (every request fails as unreachable after the latency).
final class CountingSource: DemandSource {
    let inner: SyntheticSource
    let clock: ManualClock
    let start: AdInstant
    /// Outage window, virtual seconds since the start.
    var outage: ClosedRange<Double>?
    /// The loader's idle time: requests for a unit later than this after its last borrow
    /// are counted in `requestsAfterIdle`.
    var idleTimeout: Duration = .seconds(600)
    private(set) var requests = 0
    private(set) var requestsAfterIdle = 0
    /// The most requests one ad unit had in flight at once after the outage began (the
    /// burst at recovery).
    private(set) var recoveryBurst = 0
    private var inFlight: [String: Int] = [:]
    var lastDemand: [String: AdInstant] = [:]
    /// From this virtual time on (the end of the warm-up), round trips, ads and the time
    /// integral of requests in flight for the trace's first ad unit are summed.
    var measureFrom: AdInstant?
    private(set) var answered = 0
    private(set) var roundTripMilliseconds = 0
    private(set) var adsAnswered = 0
    /// Request-milliseconds in flight for ``FeedScroll/adUnitID``, and when it last changed.
    private(set) var inFlightIntegral = 0
    private var inFlightChangedAt: AdInstant?

    /// Requests in flight for the first ad unit, integrated over time up to now.
    private func noteInFlightChange(_ unit: String) {
        guard unit == FeedScroll.adUnitID, let from = measureFrom, clock.now >= from else { return }
        let since = max(inFlightChangedAt ?? from, from)
        inFlightIntegral += Int(clock.now.unixMilliseconds - since.unixMilliseconds) * (inFlight[unit] ?? 0)
        inFlightChangedAt = clock.now
    }

    /// Mean requests in flight for the first ad unit between `measureFrom` and the call to
    /// ``endMeasurement()`` (the end of the trace).
    private(set) var meanInFlight = 0.0

    func endMeasurement() {
        noteInFlightChange(FeedScroll.adUnitID)
        guard let from = measureFrom, clock.now > from else { return }
        meanInFlight = Double(inFlightIntegral) / Double(clock.now.unixMilliseconds - from.unixMilliseconds)
    }

    init(inner: SyntheticSource, clock: ManualClock) {
        self.inner = inner
        self.clock = clock
        self.start = clock.now
    }

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        requests += 1
        let now = clock.now
        if let last = lastDemand[request.adUnitID], now - last > idleTimeout { requestsAfterIdle += 1 }
        let seconds = Double(now.unixMilliseconds - start.unixMilliseconds) / 1_000
        let unit = request.adUnitID
        noteInFlightChange(unit)
        inFlight[unit, default: 0] += 1
        if let outage, seconds >= outage.lowerBound { recoveryBurst = max(recoveryBurst, inFlight[unit]!) }
        let counted: (Result<[DeliveredAd], UpstreamError>) -> Void = { [self] result in
            noteInFlightChange(unit)
            inFlight[unit, default: 0] -= 1
            if let from = measureFrom, now >= from {
                answered += 1
                roundTripMilliseconds += Int(clock.now.unixMilliseconds - now.unixMilliseconds)
                if case .success(let ads) = result { adsAnswered += ads.count }
            }
            completion(result)
        }
        if let outage, outage.contains(seconds) {
            _ = clock.schedule(at: now + .milliseconds(120)) {
                counted(.failure(UpstreamError(code: .unreachable, message: "outage")))
            }
            return
        }
        inner.loadAds(request, count: count, completion: counted)
    }

    func adShown(_ ad: Ad) { inner.adShown(ad) }
    func adDropped(_ ad: Ad, reason: AdDropReason) { inner.adDropped(ad, reason: reason) }
}
