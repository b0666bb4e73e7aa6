/// A pool's measured demand and how many ads it should keep for it (demand sizing).
///
/// The model: a borrow that needs a fresh ad takes one from the pool, and a top-up asked now
/// lands after the upstream round trip. So the pool must hold, on top of what is on screen
/// (leased ads, which do not count as stock), enough ads for the borrows that arrive while a
/// refill is under way:
///
///     stock = λ·T + 3·√(λ·T) + batch + parked
///
/// - λ, the borrow rate: fresh borrows (hits and misses, not slot reuses) per second,
///   an exponentially weighted average over 5 s windows (weight 0.2 per window, so the
///   average follows a change within about half a minute); a window under way counts with
///   its own rate when that is higher, so a burst raises the target at once.
/// - T, the refill time: twice the average observed upstream latency (weight 0.2 per
///   answer, 1 s before the first) plus 250 ms, covering short answers and retries.
/// - 3·√(λ·T): three standard deviations of Poisson arrivals over T.
/// - batch: automatic top-ups wait until a whole batch is missing, so the stock dips by up
///   to one batch below the target before a refill is asked for.
///
/// On top of that the pool holds a *cover*: `λ × stockCover`, the ads it needs to serve alone
/// for ``LoaderConfiguration/stockCover`` if the upstream stops; the stock is the larger of
/// the two. The cover is bounded by a tenth of the time an ad can be lent (lifetime minus the
/// minimum remaining life): after demand falls tenfold at once, what the pool holds is then
/// still lent before it expires.
///
/// The stock is bounded by the ads' remaining life: no more than λ times the time an ad
/// can be lent, since more would expire unshown; never below one batch, so a pool that was
/// just created or is quiet still has an ad for its next borrow. The target is then
/// `leased + stock`, capped by ``LoaderConfiguration/maximumRetainedAdvertisements`` (the
/// memory bound).
///
/// Upstream concurrency follows the same measurements (Little's law): the requests a pool
/// needs in flight are `λ × round trip / ads per request`, where the round trip and the ads
/// an answered request brings (fill rate × batch) are measured; ``inFlightTarget(at:batch:)``
/// doubles that and adds two, for slow answers, no-fills and the stock's own refill.
struct DemandEstimate {
    static let windowMilliseconds: Int64 = 5_000
    static let rateWeight = 0.2
    static let latencyWeight = 0.2

    /// Fresh borrows per millisecond, averaged over past windows.
    private(set) var averageRate = 0.0
    /// The same, averaged slowly (weight 0.01 per window: a time constant of about 8
    /// minutes). The cover follows the lower of the two: it grows only with demand that
    /// lasts, so a pool's short burst (one user scrolling for a minute) does not leave minutes
    /// of stock to expire, and it falls as fast as demand does.
    private(set) var slowRate = 0.0
    static let slowWeight = 0.01
    private var windowStart: Int64
    private var windowCount = 0
    /// Average upstream latency of answered requests, milliseconds.
    private(set) var latency = 1_000.0
    /// Average ads an answered request brought (no-fills count as 0); nil before the first.
    private(set) var adsPerRequest: Double?
    static let adsWeight = 0.1

    init(now: Int64) {
        windowStart = now
    }

    mutating func noteBorrow(at now: Int64) {
        advance(to: now)
        windowCount += 1
    }

    mutating func noteLatency(milliseconds: Int64) {
        latency += Self.latencyWeight * (Double(max(0, milliseconds)) - latency)
    }

    /// Counts one answered request that asked for `asked` ads and brought `accepted`.
    mutating func noteAnswer(asked: Int, accepted: Int) {
        let value = Double(max(0, min(accepted, asked)))
        if let current = adsPerRequest {
            adsPerRequest = current + Self.adsWeight * (value - current)
        } else {
            adsPerRequest = value
        }
    }

    /// Requests this pool should keep in flight for its demand: `2 × λ × round trip / ads per
    /// request + 2` (at least 2, so a quiet pool still refills while one request is slow).
    /// Before the first answer a request is assumed to bring a whole `batch`; ads per request
    /// count at least half an ad, so an exchange that stops filling does not multiply requests.
    mutating func inFlightTarget(at now: Int64, batch: Int) -> Int {
        let rate = self.rate(at: now)
        let perRequest = max(adsPerRequest ?? Double(batch), 0.5)
        let needed = rate * latency / perRequest
        return Int((2 * needed).rounded(.up)) + 2
    }

    /// Fresh borrows per millisecond now.
    mutating func rate(at now: Int64) -> Double {
        advance(to: now)
        let elapsed = max(now - windowStart, 1_000)
        return max(averageRate, Double(windowCount) / Double(elapsed))
    }

    /// The refill time T, milliseconds.
    var refillMilliseconds: Double { 2 * latency + 250 }

    /// Ads to keep available or coming, beyond the leased ones (the model above).
    mutating func stock(
        at now: Int64, batch: Int, parked: Int, lendableMilliseconds: Int64, coverMilliseconds: Int64
    ) -> Int {
        let rate = self.rate(at: now)
        let expected = rate * refillMilliseconds
        var stock = Int((expected + 3 * expected.squareRoot()).rounded(.up)) + batch + parked
        // The cover follows the average rate, not a window's burst: one borrow after a quiet
        // spell does not buy minutes of stock.
        let cover = min(coverMilliseconds, lendableMilliseconds / 10)
        if cover > 0 { stock = max(stock, Int((min(averageRate, slowRate) * Double(cover)).rounded(.up))) }
        let lifeBound = Int(rate * Double(lendableMilliseconds))
        stock = min(stock, max(batch + parked, lifeBound))
        return stock
    }

    /// The estimate as a snapshot's value.
    var snapshot: PoolSnapshot.Demand {
        PoolSnapshot.Demand(
            averageRate: averageRate, slowRate: slowRate, windowStart: AdInstant(unixMilliseconds: windowStart),
            windowCount: windowCount, latencyMilliseconds: latency, adsPerRequest: adsPerRequest)
    }

    /// The estimate a snapshot held; a window start in the future (a clock stepped back)
    /// starts the window now.
    init(_ snapshot: PoolSnapshot.Demand, now: Int64) {
        averageRate = max(0, snapshot.averageRate.isFinite ? snapshot.averageRate : 0)
        slowRate = max(0, snapshot.slowRate.isFinite ? snapshot.slowRate : 0)
        windowStart = min(snapshot.windowStart.unixMilliseconds, now)
        windowCount = max(0, snapshot.windowCount)
        latency = snapshot.latencyMilliseconds.isFinite ? max(0, snapshot.latencyMilliseconds) : 1_000
        adsPerRequest = snapshot.adsPerRequest.flatMap { $0.isFinite ? max(0, $0) : nil }
    }

    private mutating func advance(to now: Int64) {
        guard now >= windowStart + Self.windowMilliseconds else { return }
        let windows = (now - windowStart) / Self.windowMilliseconds
        let windowRate = Double(windowCount) / Double(Self.windowMilliseconds)
        averageRate += Self.rateWeight * (windowRate - averageRate)
        slowRate += Self.slowWeight * (windowRate - slowRate)
        // Windows without a borrow decay the averages; after 64 of them the fast one is
        // negligible (and the cover follows the lower of the two).
        var empty = min(windows - 1, 64)
        while empty > 0 {
            averageRate *= 1 - Self.rateWeight
            slowRate *= 1 - Self.slowWeight
            empty -= 1
        }
        if windows > 64 {
            averageRate = 0
            slowRate = 0
        }
        windowStart += windows * Self.windowMilliseconds
        windowCount = 0
    }
}
