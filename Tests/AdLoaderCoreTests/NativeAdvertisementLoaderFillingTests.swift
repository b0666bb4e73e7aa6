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
        // An explicit call still loads, and a success restarts the count.
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

    @Test func borrowDuringBackoffStillLoads() throws {
        let h = try Self.single()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .retryable)
        #expect(try h.borrow() == .noAdYet)
        #expect(h.source.requests.count == 2)
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
        // The probe answers: topping up resumes at once.
        h.source.succeed()
        #expect(h.source.pendingAds == 5)
        #expect(h.source.requests.suffix(3).map(\.count) == [2, 2, 1])
        #expect(h.clock.pendingCount == 1)  // only the sweep timer, no probe
    }

    @Test func finalFailuresAreNotRetriedAutomatically() throws {
        let h = try Self.single()
        try h.loader.prefetch(adUnitID: "unit")
        h.source.fail(0, .final)
        #expect(Self.timeToNextRequest(h) == nil)
        #expect(try h.loader.prefetch(adUnitID: "unit").requested == 1)
    }

    @Test func aPartialFillFreesTheUnfilledCount() throws {
        let h = try Harness { $0.numberOfAdvertisements = 5; $0.maximumRetainedAdvertisements = 5 }
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
            var completions: [(Result<[NativeAdContent], UpstreamError>) -> Void] = []
            func loadAds(
                _ request: AdRequest, count: Int,
                completion: @escaping (Result<[NativeAdContent], UpstreamError>) -> Void
            ) { completions.append(completion) }
        }
        let clock = ManualClock()
        let source = Greedy()
        var configuration = LoaderConfiguration()
        configuration.source = "greedy"
        configuration.numberOfAdvertisements = 2
        configuration.maximumRetainedAdvertisements = 2
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["greedy": source], clock: clock, scheduler: clock)
        try loader.prefetch(adUnitID: "u")
        source.completions[0](.success((0..<9).map { NativeAdContent(headline: "\($0)") }))
        #expect(loader.stats().first?.available == 2)
    }
}
