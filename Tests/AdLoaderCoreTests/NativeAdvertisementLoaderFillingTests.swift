import AdLoaderCore
import AdLoaderTestSupport
import Testing

struct NativeAdvertisementLoaderFillingTests {
    /// A pool of one ad per request and one retained, so each load is one request.
    static func single(_ configure: (inout LoaderConfiguration) -> Void = { _ in }) throws -> Harness {
        try Harness {
            $0.numberOfAdvertisements = 1
            $0.maximumRetainedAdvertisements = 1
            $0.retry.delay = .seconds(5)
            // These tests wait long for requests that may never come: keep the pool.
            $0.poolRemovalTimeout = .seconds(86_400)
            $0.idleTimeout = .seconds(86_400)
            configure(&$0)
        }
    }

    /// Advances until the source gets a new request; returns the time it took.
    static func timeToNextRequest(_ h: Harness, limit: Duration = .seconds(10_000)) -> Duration? {
        let before = h.source.requests.count
        let start = h.clock.now
        while h.source.requests.count == before {
            guard let next = h.clock.nextDeadline, next - start <= limit else { return nil }
            h.clock.advance(to: next)
        }
        return h.clock.now - start
    }

    @Test func retryableFailuresRetryAfterAGrowingCappedDelay() throws {
        let h = try Self.single {
            $0.retry.multiplier = 2
            $0.retry.maximumDelay = .seconds(30)
            $0.retry.maximumCount = 5
        }
        try h.loader.prefetch(adUnitID: "unit")
        var delays: [Duration] = []
        for _ in 0..<5 {
            h.source.fail(0, .retryable)
            delays.append(Self.timeToNextRequest(h) ?? .zero)
        }
        #expect(delays == [.seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(30)])
        // The sixth consecutive failure: no more automatic retries.
        h.source.fail(0, .retryable)
        #expect(Self.timeToNextRequest(h) == nil)
        let stats = h.stats()
        #expect(stats.upstreamFailures == 6)
        #expect(stats.upstreamRequests == 6)
        #expect(h.events(.loadFinished).allSatisfy { $0.error?.code == .retryable })
        // An explicit call loads once the retry delay has passed (not sooner), and a success
        // restarts the count.
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        h.clock.advance(by: .seconds(5))
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 1)
        h.source.succeed()
        let lease = try h.lease()
        try h.loader.returnLease(lease.id, shown: true)  // consumed: automatic top-up
        h.source.fail(0, .retryable)
        #expect(Self.timeToNextRequest(h) == .seconds(5))
    }

    @Test func jitterSpreadsDelaysDeterministically() throws {
        func delays(seed: UInt64) throws -> [Duration] {
            let h = try Harness(seed: seed) {
                $0.numberOfAdvertisements = 1
                $0.maximumRetainedAdvertisements = 1
                $0.retry.delay = .seconds(10)
                $0.retry.jitter = 0.5
            }
            try h.loader.prefetch(adUnitID: "unit")
            var result: [Duration] = []
            for _ in 0..<8 {
                h.source.fail(0, .retryable)
                result.append(Self.timeToNextRequest(h) ?? .zero)
            }
            return result
        }
        let first = try delays(seed: 1)
        #expect(try delays(seed: 1) == first)
        #expect(first.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(15) })
        #expect(Set(first).count > 1)
        #expect(try delays(seed: 2) != first)
    }

    /// One discipline for every path: a borrow during the backoff does not send a request
    /// before the retry delay is over (it used to, one request per borrow).
    @Test func borrowDuringBackoffWaitsForTheRetry() throws {
        let h = try Self.single()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .retryable)
        for _ in 0..<5 { #expect(try h.borrow() == .noAdYet) }
        #expect(h.source.requests.count == 1)
        #expect(Self.timeToNextRequest(h) == .seconds(5))
        #expect(h.source.requests.count == 2)
    }

    /// One failure among answers (a 1 % error rate) does not stop a busy pool: an answer ends
    /// the backoff. A Retry-After holds whatever answers meanwhile.
    @Test func anAnswerEndsTheBackoffButNotARetryAfter() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 1
            $0.maximumRetainedAdvertisements = 4
        }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.count == 4)
        h.source.fail(0, .retryable)
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 4)  // backing off
        h.source.succeed()
        _ = try h.lease()
        #expect(h.source.requests.count == 5)  // the answer ended the backoff
        h.source.fail(0, .retryable, retryAfter: .seconds(5))
        h.source.succeed()
        _ = try h.lease()
        #expect(h.source.requests.count == 5)  // Retry-After: 5 holds despite the answer
        h.clock.advance(by: .seconds(5))
        #expect(h.source.requests.count > 5)
    }

    /// A Retry-After longer than the retry delay holds every path back until it has passed.
    @Test func retryAfterHoldsBorrowsAndPrefetchesBack() throws {
        let h = try Self.single { $0.retry.delay = .seconds(1) }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .retryable, retryAfter: .seconds(5))
        for second in 0..<5 {
            #expect(try h.borrow() == .noAdYet)
            #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
            #expect(h.source.requests.count == 1, "a request \(second) s after a 503 with Retry-After: 5")
            h.clock.advance(by: .milliseconds(999))
        }
        h.clock.advance(by: .milliseconds(5))
        #expect(h.source.requests.count == 2)
    }

    /// While unreachable, borrows send one probe per retry delay (not only the probe timer's
    /// 30 s), and the first answer resumes filling at once.
    @Test func borrowsProbeAnUnreachableSourceAfterTheRetryDelay() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 2
            $0.maximumRetainedAdvertisements = 6
            $0.retry.delay = .seconds(5)
            $0.retry.probeInterval = .seconds(30)
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.failAll(.unreachable)
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 3)
        h.clock.advance(by: .seconds(5))
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 4)
        #expect(h.source.requests.last?.count == 1)
        #expect(try h.borrow() == .noAdYet)  // one probe at a time
        #expect(h.source.requests.count == 4)
        h.source.succeed()
        #expect(h.source.requests.count > 4)  // filling resumed at once
        #expect(h.source.requests.last?.count == 2)
    }

    @Test func unreachableStopsRetriesAndProbesUntilItAnswers() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 2
            $0.maximumRetainedAdvertisements = 6
            $0.retry.probeInterval = .seconds(30)
        }
        try h.loader.prefetch(adUnitID: "unit")
        #expect(h.source.requests.count == 3)
        h.source.fail(0, .unreachable)
        h.source.fail(0, .retryable)
        h.source.fail(0, .unreachable)
        // Explicit calls do not hammer the source while it is unreachable.
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 3)
        // One single-ad probe per interval.
        #expect(Self.timeToNextRequest(h) == .seconds(30))
        #expect(h.source.requests.last?.count == 1)
        h.source.fail(0, .unreachable)
        #expect(Self.timeToNextRequest(h) == .seconds(30))
        #expect(h.source.requests.count == 5)
        // The probe answers: topping up resumes at once, in whole batches (5 missing: 2 + 2;
        // the last one waits, the pool is not dry).
        h.source.succeed()
        #expect(h.source.pendingAds == 4)
        #expect(h.source.requests.suffix(2).map(\.count) == [2, 2])
        #expect(h.clock.pendingCount == 2)  // only the sweep timer and removal check, no probe
    }

    @Test func finalFailuresAreNotRetriedAutomatically() throws {
        let h = try Self.single()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .final)
        #expect(Self.timeToNextRequest(h) == nil)
        // An explicit call loads again, once the retry delay has passed since the failure.
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        h.clock.advance(by: h.configuration.retry.delay)
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 1)
    }

    @Test func aPartialFillFreesTheUnfilledCount() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 5
        }
        try h.loader.prefetch(adUnitID: "unit")
        h.source.succeed(0, fill: 0)
        let stats = h.stats()
        #expect(stats.inFlight == 0)
        #expect(stats.loaded == 0)
        #expect(h.events(.loadFinished).first?.count == 0)
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 5)
    }

    @Test func aSourceAnsweringTooManyCannotOverfill() throws {
        final class Greedy: DemandSource {
            var completions: [(Result<[DeliveredAd], UpstreamError>) -> Void] = []
            func loadAds(
                _ request: AdRequest, count: Int,
                completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) { completions.append(completion) }
        }
        let clock = ManualClock()
        let source = Greedy()
        var configuration = LoaderConfiguration.classic()
        configuration.source = "greedy"
        configuration.numberOfAdvertisements = 2
        configuration.maximumRetainedAdvertisements = 2
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["greedy": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u")
        let nine = (0..<9).map { DeliveredAd(creative: .native(NativeAdContent(headline: "\($0)"))) }
        source.completions[0](.success(nine))
        #expect(loader.stats().first?.available == 2)
    }

    // MARK: fill policy: whole batches

    @Test func steadyBorrowingSendsOnlyWholeBatches() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 20
        }
        try h.fill()
        #expect(h.source.requests.map(\.count) == [5, 5, 5, 5])
        // Borrow, show (consumed), answer what was asked: 23 impressions.
        for _ in 0..<23 {
            let lease = try h.lease()
            #expect(try h.loader.returnLease(lease.id, shown: true) == .consumed)
            let held = h.stats().available + h.stats().leased + h.stats().inFlight
            #expect((16...20).contains(held), "the pool floats within one batch of the maximum")
            h.source.succeedAll()
        }
        // 23 consumed: 4 whole batches, the 3 left missing wait for the fifth.
        #expect(h.source.requests.map(\.count) == [5, 5, 5, 5, 5, 5, 5, 5])
        #expect(h.stats().available == 17)
        #expect(h.stats().borrowHits == 23)
        #expect(h.stats().upstreamRequests == 8)
    }

    @Test func heldLeasesAndReturnsSendWholeBatchesOnly() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 4
            $0.maximumRetainedAdvertisements = 10
        }
        try h.fill()
        #expect(h.source.requests.map(\.count) == [4, 4, 2])
        var leases: [Lease] = []
        for _ in 0..<6 { leases.append(try h.lease()) }
        for lease in leases.prefix(3) { try h.loader.returnLease(lease.id, shown: true) }  // 3 missing
        #expect(h.source.requests.count == 3)
        try h.loader.returnLease(leases[3].id, shown: true)  // 4 missing: one whole batch
        #expect(h.source.requests.map(\.count) == [4, 4, 2, 4])
        try h.loader.returnLease(leases[4].id, shown: true)
        #expect(h.source.requests.count == 4)
    }

    @Test func aDryPoolGetsAPartialBatch() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 3
        }
        try h.fill()
        #expect(h.source.requests.map(\.count) == [3])
        for _ in 0..<2 {
            let lease = try h.lease()
            try h.loader.returnLease(lease.id, shown: true)
        }
        // Two missing, one still available: no request for less than a batch.
        #expect(h.source.requests.count == 1)
        // The borrow that takes the last ad leaves nothing available or coming: a partial batch.
        let last = try h.lease()
        #expect(h.source.requests.map(\.count) == [3, 2])
        #expect(h.stats().inFlight == 2)
        // Nothing available but ads coming: a miss asks for no more.
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 2)
        // In flight fails: the pool is dry again, and the consumed ad makes it 3 missing.
        h.source.fail(0, .retryable)
        try h.loader.returnLease(last.id, shown: true)
        #expect(try h.borrow() == .noAdYet)  // backing off: even a borrow waits for the retry
        #expect(h.source.requests.map(\.count) == [3, 2])
        h.clock.advance(by: h.configuration.retry.delay)
        #expect(h.source.requests.map(\.count) == [3, 2, 3])
    }

    @Test func parkedBorrowsCountAsRunningDry() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 5
        }
        try h.fill()
        let leases = try (0..<5).map { _ in try h.lease() }
        var answers: [BorrowResult] = []
        for _ in 0..<2 {
            #expect(try h.loader.borrow(adUnitID: "unit", wait: .seconds(5)) { answers.append($0) }.parked != nil)
        }
        #expect(h.source.requests.count == 1)  // nothing missing: all five are leased
        try h.loader.returnLease(leases[0].id, shown: true)
        // One missing, nothing available or in flight, two borrows waiting: ask for one.
        #expect(h.source.requests.map(\.count) == [5, 1])
        try h.loader.returnLease(leases[1].id, shown: true)
        // One ad coming for two waiting borrows: still running dry, ask for one more.
        #expect(h.source.requests.map(\.count) == [5, 1, 1])
        h.source.succeedAll()
        #expect(answers.count == 2)
        #expect(answers.allSatisfy { if case .leased(_, reused: false) = $0 { true } else { false } })
    }

    @Test func aShortAnswerWithBorrowsStillParkedAsksAgain() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 5
        }
        var answers: [BorrowResult] = []
        for _ in 0..<3 {
            #expect(try h.loader.borrow(adUnitID: "unit", wait: .seconds(5)) { answers.append($0) }.parked != nil)
        }
        #expect(h.source.requests.map(\.count) == [5])
        // Two of five arrive: two borrows served, one still waits with nothing coming.
        h.source.succeed(0, fill: 2)
        #expect(answers.count == 2)
        #expect(h.source.requests.map(\.count) == [5, 3])
        h.source.succeed(0, fill: 1)
        #expect(answers.count == 3)
        #expect(answers.allSatisfy { if case .leased = $0 { true } else { false } })
        // Nothing parked any more: a short answer alone asks for no more.
        #expect(h.source.requests.count == 2)
    }

    @Test func anEmptyAnswerIsNotReaskedAtOnce() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 5
        }
        var answers: [BorrowResult] = []
        #expect(try h.loader.borrow(adUnitID: "unit", wait: .seconds(5)) { answers.append($0) }.parked != nil)
        h.source.succeed(0, fill: 0)
        #expect(h.source.requests.count == 1)
        h.clock.advance(by: .seconds(5))
        #expect(answers == [.noAdYet])
    }

    @Test func explicitPrefetchFillsCompletely() throws {
        let h = try Harness {
            $0.numberOfAdvertisements = 5
            $0.maximumRetainedAdvertisements = 12
        }
        try h.fill()
        #expect(h.source.requests.map(\.count) == [5, 5, 2])
        for _ in 0..<3 {
            let lease = try h.lease()
            try h.loader.returnLease(lease.id, shown: true)
        }
        #expect(h.source.requests.count == 3)  // 3 missing, 9 available: automatic waits
        let result = try h.loader.prefetch(adUnitID: "unit")
        #expect(result.requested == 3)
        #expect(h.source.requests.map(\.count) == [5, 5, 2, 3])
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 0)
        h.source.succeedAll()
        #expect(h.stats().available == 12)
    }
}

extension NativeAdvertisementLoaderFillingTests {
    /// An exchange's `Retry-After` (``UpstreamError/retryAfter``) delays the automatic retry
    /// beyond the policy's delay, never below it.
    @Test func retryWaitsForTheLongerOfRetryAfterAndThePolicyDelay() throws {
        final class Failing: DemandSource {
            var completions: [(Result<[DeliveredAd], UpstreamError>) -> Void] = []
            func loadAds(
                _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) { completions.append(completion) }
        }
        let clock = ManualClock()
        let source = Failing()
        var configuration = LoaderConfiguration()
        configuration.source = "failing"
        configuration.numberOfAdvertisements = 1
        configuration.maximumRetainedAdvertisements = 1
        configuration.retry.delay = .seconds(2)
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["failing": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u")
        source.completions[0](.failure(UpstreamError(code: .retryable, message: "429", retryAfter: .seconds(7))))
        clock.advance(by: .milliseconds(6_999))
        #expect(source.completions.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(source.completions.count == 2)
        // A shorter Retry-After does not shorten the policy's delay.
        source.completions[1](.failure(UpstreamError(code: .retryable, message: "429", retryAfter: .seconds(1))))
        clock.advance(by: .milliseconds(1_999))
        #expect(source.completions.count == 2)
        clock.advance(by: .milliseconds(1))
        #expect(source.completions.count == 3)
    }
}

extension NativeAdvertisementLoaderFillingTests {
    @Test func sourceStatsListTheCountingSourcesOfTheMatchingLoaders() throws {
        final class Counting: DemandSource {
            func loadAds(
                _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) {}
            var statistics: DemandSourceStats? {
                var stats = DemandSourceStats(name: "ignored")
                stats.noticesSent = 3
                return stats
            }
        }
        final class Silent: DemandSource {
            func loadAds(
                _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
            ) {}
        }
        let clock = ManualClock()
        var a = LoaderConfiguration(name: "a")
        a.source = "counting"
        var b = LoaderConfiguration(name: "b")
        b.source = "counting"
        var c = LoaderConfiguration(name: "c")
        c.source = "silent"
        let loader = try NativeAdvertisementLoader(
            loaders: [a, b, c], sources: ["counting": Counting(), "silent": Silent()], clock: clock, scheduler: clock)
        #expect(loader.sourceStats().map(\.name) == ["counting"], "one entry per source, named by the loader")
        #expect(loader.sourceStats().first?.noticesSent == 3)
        #expect(loader.sourceStats(loader: "c").isEmpty)
        #expect(loader.sourceStats(loader: "nope").isEmpty)
    }
}
