import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// A source's context in tests: the number of the ad it came with.
final class TestContext: AdSourceContext {
    let number: Int
    init(number: Int) { self.number = number }

    /// The number, as 8 little-endian bytes (what a ``PoolSnapshot`` keeps).
    var snapshotState: [UInt8]? { withUnsafeBytes(of: Int64(number).littleEndian) { Array($0) } }

    /// The context `snapshotState` was taken from; nil for bytes that are not 8 long.
    static func restored(from state: [UInt8]) -> TestContext? {
        guard state.count == 8 else { return nil }
        let value = state.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return TestContext(number: Int(value))
    }
}

/// A demand source completed by hand: records every request and keeps its completion, and
/// records the loader's notices.
final class FakeDemandSource: DemandSource {
    struct Pending {
        let request: AdRequest
        let count: Int
        let completion: (Result<[DeliveredAd], UpstreamError>) -> Void
    }

    /// Every request ever made, oldest first.
    private(set) var requests: [(request: AdRequest, count: Int)] = []
    /// Requests not yet answered, oldest first.
    private(set) var pending: [Pending] = []
    private var served = 0
    /// The creative of the n-th ad served (1, 2, ...): native "ad n" unless a test changes it.
    var creative: (Int) -> AdCreative = { .native(NativeAdContent(headline: "ad \($0)")) }
    /// The source's creative id of the n-th ad served: none unless a test sets one.
    var creativeID: (Int) -> String? = { _ in nil }
    /// Every ``adShown(_:)`` notice, oldest first.
    private(set) var shown: [Ad] = []
    /// Every ``adDropped(_:reason:)`` notice, oldest first.
    private(set) var dropped: [(ad: Ad, reason: AdDropReason)] = []

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        requests.append((request, count))
        pending.append(Pending(request: request, count: count, completion: completion))
    }

    /// Answers pending request `index` with `fill` ads (default: all asked).
    func succeed(_ index: Int = 0, fill: Int? = nil, sourceExpiry: AdInstant? = nil) {
        let request = pending.remove(at: index)
        let contents = (0..<min(fill ?? request.count, request.count)).map { _ in
            served += 1
            return DeliveredAd(
                creative: creative(served), sourceExpiry: sourceExpiry, context: TestContext(number: served),
                creativeID: creativeID(served))
        }
        request.completion(.success(contents))
    }

    func adShown(_ ad: Ad) { shown.append(ad) }

    func adDropped(_ ad: Ad, reason: AdDropReason) { dropped.append((ad, reason)) }

    func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? { TestContext.restored(from: state) }

    /// The dropped notices as (ad id, reason).
    var droppedIDs: [String: AdDropReason] {
        Dictionary(dropped.map { ($0.ad.id, $0.reason) }, uniquingKeysWith: { first, _ in first })
    }

    /// Answers every pending request in full.
    func succeedAll() {
        while !pending.isEmpty { succeed() }
    }

    func fail(_ index: Int = 0, _ code: UpstreamError.Code, retryAfter: Duration? = nil) {
        pending.remove(at: index).completion(
            .failure(UpstreamError(code: code, message: "test \(code)", retryAfter: retryAfter)))
    }

    func failAll(_ code: UpstreamError.Code) {
        while !pending.isEmpty { fail(0, code) }
    }

    /// Sum of ads asked by pending requests.
    var pendingAds: Int { pending.reduce(0) { $0 + $1.count } }
}

/// A demand source for the model: answers by hand, flags requests outside 1...batch, and
/// checks the loader's notices: shows counted one by one, at most one drop per ad, never a
/// drop after a show or of a consumed ad, the context of its own ads back every time.
final class ModelSource: DemandSource {
    struct Pending {
        var loader: String
        var unit: String
        var count: Int
        var completion: (Result<[DeliveredAd], UpstreamError>) -> Void
    }

    var limits: [String: Int] = [:]
    /// Called for every request (loader, ad unit, count), after the loader counted it in flight.
    var onRequest: (String, String, Int) -> Void = { _, _, _ in }
    private(set) var pending: [Pending] = []
    private(set) var badRequest: String?
    private var requests: [String: Int] = [:]
    private var served = 0
    /// ad id -> the `showCount` of its last shown notice.
    private(set) var shownNotices: [String: Int] = [:]
    /// ad id -> the reason of its drop notice.
    private(set) var dropNotices: [String: AdDropReason] = [:]
    /// The first notice that broke a rule.
    private(set) var badNotice: String?

    func adShown(_ ad: Ad) {
        let previous = shownNotices[ad.id] ?? 0
        if ad.showCount != previous + 1 { flag("shown notice of \(ad.id) at show \(ad.showCount) after \(previous)") }
        if dropNotices[ad.id] != nil { flag("shown notice of \(ad.id) after its drop notice") }
        if !(ad.sourceContext is TestContext) { flag("shown notice of \(ad.id) without its context") }
        shownNotices[ad.id] = ad.showCount
    }

    func adDropped(_ ad: Ad, reason: AdDropReason) {
        if dropNotices[ad.id] != nil { flag("second drop notice of \(ad.id) (\(reason))") }
        if ad.showCount != 0 || shownNotices[ad.id] != nil { flag("drop notice (\(reason)) of \(ad.id), shown before") }
        if reason == .consumed { flag("drop notice of \(ad.id) as consumed") }
        if !(ad.sourceContext is TestContext) { flag("drop notice of \(ad.id) without its context") }
        dropNotices[ad.id] = reason
    }

    func restoreContext(from state: [UInt8], for ad: Ad) -> (any AdSourceContext)? { TestContext.restored(from: state) }

    private func flag(_ problem: String) {
        badNotice = badNotice ?? problem
    }

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        let loader = request.keywords.first ?? "?"
        if !(1...(limits[loader] ?? 0)).contains(count) {
            badRequest = badRequest ?? "request for \(count) ads from \(loader) (batch \(limits[loader] ?? 0))"
        }
        requests[loader, default: 0] += 1
        pending.append(Pending(loader: loader, unit: request.adUnitID, count: count, completion: completion))
        onRequest(loader, request.adUnitID, count)
    }

    func requestCount(loader: String) -> Int { requests[loader] ?? 0 }

    func pendingRequests(loader: String, unit: String) -> Int {
        pending.count { $0.loader == loader && $0.unit == unit }
    }

    func pendingAds(loader: String, unit: String) -> Int {
        pending.reduce(0) { $0 + ($1.loader == loader && $1.unit == unit ? $1.count : 0) }
    }

    func succeed(_ index: Int, fill: Int?, sourceExpiry: AdInstant?) {
        let request = pending.remove(at: index)
        let contents = (0..<min(fill ?? request.count, request.count)).map { _ in
            served += 1
            let content = NativeAdContent(headline: "model ad \(served)")
            return DeliveredAd(
                creative: .native(content), sourceExpiry: sourceExpiry, context: TestContext(number: served))
        }
        request.completion(.success(contents))
    }

    func fail(_ index: Int, _ code: UpstreamError.Code, retryAfter: Duration? = nil) {
        pending.remove(at: index).completion(
            .failure(UpstreamError(code: code, message: "model \(code)", retryAfter: retryAfter)))
    }
}

/// A loader over a ``ManualClock`` and a ``FakeDemandSource``, recording every event.
final class Harness {
    let clock = ManualClock()
    let source = FakeDemandSource()
    let loader: NativeAdvertisementLoader
    /// The loader's configuration as built (a base for reconfiguration tests).
    let configuration: LoaderConfiguration
    private(set) var events: [AdEvent] = []

    /// A default-named loader (5 per request, max 10) with test settings; `configure` edits it.
    ///
    /// The settings are those of the loader before demand sizing, so the tests of filling,
    /// leasing and expiry say what they mean: fixed sizing at 10, no concurrency cap to
    /// speak of, ads lent until they expire (minimum remaining life 0). Tests of the newer
    /// rules set them in `configure`.
    /// `budget`: the fake source's request-rate budget, if any.
    init(
        seed: UInt64 = 7, budget: RequestRateBudget? = nil, _ configure: (inout LoaderConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = LoaderConfiguration.classic()
        configuration.source = "fake"
        configure(&configuration)
        self.configuration = configuration
        loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["fake": source], budgets: budget.map { ["fake": $0] } ?? [:],
            clock: clock, scheduler: clock, idSeed: seed)
        _ = loader.addObserver { [unowned self] in events.append($0) }
    }

    /// Borrows without waiting and returns the answer given at once.
    func borrow(_ unit: String = "unit", slot: String? = nil) throws(LoaderError) -> BorrowResult {
        let outcome = try loader.borrow(adUnitID: unit, slot: slot, whenServed: BorrowOutcome.neverServed)
        guard let answer = outcome.answer else { fatalError("a borrow without wait answered \(outcome)") }
        return answer
    }

    /// Borrows and expects a lease.
    func lease(_ unit: String = "unit", slot: String? = nil) throws -> Lease {
        guard case .leased(let lease, _) = try borrow(unit, slot: slot) else {
            throw TestFailure("expected a lease")
        }
        return lease
    }

    /// Prefetches and answers every request in full.
    func fill(_ unit: String = "unit") throws {
        try loader.prefetch(adUnitID: unit)
        source.succeedAll()
    }

    func stats(_ unit: String = "unit") -> PoolStats {
        loader.stats(adUnitID: unit).first ?? PoolStats(loader: "default", adUnitID: unit)
    }

    func events(_ kind: AdEvent.Kind) -> [AdEvent] { events.filter { $0.kind == kind } }

    func clearEvents() { events.removeAll() }
}

extension BorrowOutcome {
    /// The answer when the borrow was answered at once, else nil.
    var answer: BorrowResult? {
        if case .answered(let result) = self { result } else { nil }
    }

    /// The handle when the borrow parked, else nil.
    var parked: (any ParkedBorrow)? {
        if case .parked(let handle) = self { handle } else { nil }
    }

    var isParkingRefused: Bool {
        if case .parkingRefused = self { true } else { false }
    }

    /// A `whenServed` for borrows that must not park: records an issue when called.
    static func neverServed(_ result: BorrowResult) {
        Issue.record("whenServed called for a borrow that did not park: \(result)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension PoolStats {
    /// The accounting invariant: every loaded ad is somewhere.
    var isBalanced: Bool {
        loaded == UInt64(available) + UInt64(leased) + consumed + expired + removed
    }
}

extension LoaderConfiguration {
    /// The settings of the loader before demand sizing, for the tests of filling, leasing
    /// and expiry: fixed sizing at 10, no concurrency cap to speak of, ads lent until they
    /// expire (minimum remaining life 0). Tests of the newer rules set them explicitly.
    static func classic(name: String = LoaderConfiguration.defaultName) -> LoaderConfiguration {
        var configuration = LoaderConfiguration(name: name)
        configuration.sizing = .fixed
        configuration.maximumRetainedAdvertisements = 10
        configuration.maximumConcurrentRequests = 1_000
        configuration.minimumRemainingLife = .zero
        return configuration
    }
}
