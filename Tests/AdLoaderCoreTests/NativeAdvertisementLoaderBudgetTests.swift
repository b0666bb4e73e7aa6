import AdLoaderTestSupport
import Testing

@testable import AdLoaderCore

/// Upstream budgets: the per-source request-rate budget (a token bucket on the loader's clock)
/// and on-screen first, for the budget and for the per-pool concurrency cap.
struct NativeAdvertisementLoaderBudgetTests {
    /// The ad unit of every request so far (the units of one loader share the fake source's budget).
    private func units(_ h: Harness) -> [String] { h.source.requests.map(\.request.adUnitID) }

    @Test func theBudgetCapsTheRequestRateOfASourceAcrossItsPools() throws {
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 2)) {
            $0.maximumRetainedAdvertisements = 40  // 8 requests of 5 per pool
        }
        try h.loader.prefetch(adUnitID: "a")
        try h.loader.prefetch(adUnitID: "b")
        // A full bucket holds one second's worth: 2 requests now, both for the first pool.
        #expect(units(h) == ["a", "a"])
        // Then one every 500 ms, the pools taking turns, whether or not answers came back.
        for step in 1...14 {
            h.clock.advance(by: .milliseconds(499))
            #expect(h.source.requests.count == 1 + step, "step \(step): one ms early")
            h.clock.advance(by: .milliseconds(1))
            #expect(h.source.requests.count == 2 + step, "step \(step)")
            if step.isMultiple(of: 3) { h.source.succeedAll() }
        }
        // "a" waited first; each pool served goes to the back of the queue.
        #expect(units(h) == ["a", "a", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "b", "b"])
        h.clock.advance(by: .seconds(60))
        #expect(h.source.requests.count == 16)  // both pools full: nothing more is asked
        h.source.succeedAll()
        #expect(h.stats("a").available == 40 && h.stats("b").available == 40)
    }

    @Test func anOnScreenTopUpGoesBeforeBackgroundRefills() throws {
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 1)) {
            $0.maximumRetainedAdvertisements = 20
        }
        // A background prefetch takes the token and waits for three more.
        try h.loader.prefetch(adUnitID: "background")
        #expect(units(h) == ["background"])
        // A cell on screen misses on another unit and parks: its top-up waits for a token too,
        // but goes first when one comes.
        let outcome = try h.loader.borrow(adUnitID: "screen", wait: .seconds(5)) { _ in }
        #expect(outcome.parked != nil)
        #expect(h.source.requests.count == 1)
        h.clock.advance(by: .seconds(1))
        #expect(units(h) == ["background", "screen"])
        // Its pool wants more (a whole fixed pool), but now only as a refill: turns again.
        h.clock.advance(by: .seconds(1))
        #expect(units(h) == ["background", "screen", "background"])
        // A second miss on the screen unit (nothing arrived yet) jumps the queue once more.
        #expect(try h.borrow("screen") == .noAdYet)
        h.clock.advance(by: .seconds(1))
        #expect(units(h) == ["background", "screen", "background", "screen"])
        // A budget that is not short lets every top-up go at once.
        let ample = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 100)) {
            $0.maximumRetainedAdvertisements = 20
        }
        try ample.loader.prefetch(adUnitID: "background")
        #expect(ample.source.requests.count == 4)
    }

    @Test func anOnScreenTopUpWaitsOutTheRetryDelayThenGoesAsTheCapAllows() throws {
        let h = try Harness {
            $0.maximumRetainedAdvertisements = 10
            $0.maximumConcurrentRequests = 1
            $0.retry.delay = .seconds(20)
            $0.retry.jitter = 0
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .retryable)  // a retry in 20 s: every path waits for it
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        // Two cells on screen park; nothing goes before the retry delay has passed.
        var served = 0
        for _ in 0..<2 { _ = try h.loader.borrow(adUnitID: "unit", wait: .seconds(30)) { _ in served += 1 } }
        #expect(h.source.pending.isEmpty)
        h.clock.advance(by: .seconds(19))
        #expect(h.source.pending.isEmpty)
        h.clock.advance(by: .seconds(1))
        #expect(h.source.pending.count == 1)  // the retry, one request (the cap)
        // One ad comes back: one cell served, the other still waits, and its top-up goes now.
        h.source.succeed(0, fill: 1)
        #expect(served == 1)
        #expect(h.source.pending.count == 1)
        h.source.succeed(0, fill: 1)
        #expect(served == 2)
    }

    @Test func aPoolWaitingForTheBudgetThatGoesIdleAsksForNothing() throws {
        // One token per 1,000 s: the second pool's turn comes after its idle time (600 s).
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 0.001)) {
            $0.maximumRetainedAdvertisements = 5
        }
        try h.loader.prefetch(adUnitID: "a")
        try h.loader.prefetch(adUnitID: "b")
        #expect(units(h) == ["a"])
        h.clock.advance(by: .seconds(1_000))
        #expect(units(h) == ["a"])
        #expect(h.stats("b").idle)
        // Asked again, it goes at once: the token was not spent on the idle pool.
        try h.loader.prefetch(adUnitID: "b")
        #expect(units(h) == ["a", "b"])
    }

    @Test func aDisabledLoaderWaitingForTheBudgetAsksForNothing() throws {
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 1)) {
            $0.maximumRetainedAdvertisements = 20
        }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.count == 1)
        try h.loader.setEnabled(false, loader: "default")
        h.clock.advance(by: .seconds(10))
        #expect(h.source.requests.count == 1)
        try h.loader.setEnabled(true, loader: "default")
        try h.loader.prefetch(adUnitID: "unit")
        // Enabled again: one request per token, as before.
        #expect(h.source.requests.count == 2)
        h.clock.advance(by: .seconds(1))
        #expect(h.source.requests.count == 3)
    }

    @Test func aProbeWaitsForAToken() throws {
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: 0.1)) {
            $0.maximumRetainedAdvertisements = 5
            $0.retry.probeInterval = .seconds(2)
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .unreachable)
        // Probes every 2 s, but the bucket has a token only every 10 s.
        h.clock.advance(by: .seconds(9))
        #expect(h.source.requests.count == 1)
        h.clock.advance(by: .seconds(2))
        #expect(h.source.requests.count == 2)
        #expect(h.source.requests.last?.count == 1)
    }

    @Test(arguments: [0, -1, -0.5, Double.nan, Double.infinity, -Double.infinity, 1e12, 1_000_000.5])
    func aBudgetOutOfRangeIsAConfigurationErrorNamingTheKey(rate: Double) {
        let clock = ManualClock()
        #expect {
            _ = try NativeAdvertisementLoader(
                loaders: [LoaderConfiguration.classic()], sources: ["synthetic": FakeDemandSource()],
                budgets: ["synthetic": RequestRateBudget(maximumRequestsPerSecond: rate)], clock: clock,
                scheduler: clock)
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.field == "sources.synthetic.maximumRequestsPerSecond" && error.message.contains("above 0")
        }
    }

    @Test func aBudgetForAnUnknownSourceIsAConfigurationError() {
        let clock = ManualClock()
        #expect {
            _ = try NativeAdvertisementLoader(
                loaders: [LoaderConfiguration.classic()], sources: ["synthetic": FakeDemandSource()],
                budgets: ["nowhere": RequestRateBudget(maximumRequestsPerSecond: 5)], clock: clock, scheduler: clock)
        } throws: { error in
            (error as? ConfigError)?.field == "sources.nowhere.maximumRequestsPerSecond"
        }
    }

    @Test func theLargestBudgetIsNeverShort() throws {
        let h = try Harness(budget: RequestRateBudget(maximumRequestsPerSecond: RequestRateBudget.maximumRate)) {
            $0.maximumRetainedAdvertisements = 5_000
        }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.count == 1_000)
    }

    @Test(arguments: [0, -1, Int.min, 1_000_001, Int.max])
    func aConcurrencyCapOutOfRangeIsAConfigurationErrorNamingTheKey(cap: Int) {
        var configuration = LoaderConfiguration(name: "feed")
        configuration.maximumConcurrentRequests = cap
        #expect {
            try configuration.validate()
        } throws: { error in
            (error as? ConfigError)?.field == "loaders.feed.maximumConcurrentRequests"
        }
    }
}
