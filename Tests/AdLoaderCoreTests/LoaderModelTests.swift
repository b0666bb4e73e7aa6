import AdLoaderCore
import AdLoaderTestSupport
import Testing

@testable import AdLoaderCore

/// Model-based test: seeded random sequences of calls, source answers and time advances,
/// with every invariant of the loader checked after every step. A failure prints the seed
/// and the shortest sequence (found by deleting steps and re-running) that still fails.
struct LoaderModelTests {
    static let sequences = 2_000
    static let shards = 8

    @Test(arguments: 0..<shards)
    func randomSequencesKeepEveryInvariant(shard: Int) {
        var coverage: [String: Int] = [:]
        for index in stride(from: shard, to: Self.sequences, by: Self.shards) {
            let seed = UInt64(index) &* 0x9E37_79B9 &+ 0x5EED
            let steps = ModelStep.generate(seed: seed)
            let run = ModelRun(seed: seed)
            run.run(steps)
            coverage.merge(run.coverage, uniquingKeysWith: +)
            guard let failure = run.violations.first else { continue }
            let shortest = ModelRun.shrink(seed: seed, steps: steps)
            let replay = ModelRun.failure(seed: seed, steps: shortest) ?? failure
            let listing = shortest.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
            let report = """
                model test failed for seed \(seed) (\(steps.count) steps, shrunk to \(shortest.count)):
                \(replay)
                configuration: \(ModelRun.describeConfiguration(seed: seed))
                steps:
                \(listing)
                """
            print(report)
            Issue.record(Comment(rawValue: report))
            return
        }
        // The sequences must reach every interesting path, or passing proves little.
        for path in [
            "new lease", "reused lease", "parked answered leased", "parked answered noAdYe", "removed consumed",
            "removed disabled", "expired ", "returned reclaimed", "loadFinished retryable",
            "loadFinished unreachable", "loadFinished final", "request whole batch", "request prefetch partial",
            "request dry partial", "refused over pool cap", "parking refused", "notice shown",
            "notice dropped expired", "notice dropped disabled", "lease renewed", "failed fast", "idle pool",
            "pool removed", "not found already returned", "not found reclaimed", "budget wait",
            "failure with Retry-After", "request after a backoff", "request after a Retry-After", "memory budget full",
            "dropped for memory",
        ] {
            #expect(coverage[path, default: 0] > 0, "shard \(shard) never reached \(path): \(coverage)")
        }
    }

    @Test func sameSeedReplaysTheSameEvents() {
        var events = 0
        for seed: UInt64 in 1...20 {
            let steps = ModelStep.generate(seed: seed)
            let first = ModelRun(seed: seed)
            first.run(steps)
            let second = ModelRun(seed: seed)
            second.run(steps)
            #expect(first.eventLog == second.eventLog)
            events += first.eventLog.count
        }
        #expect(events > 100)
    }

    @Test func theShrinkerFindsAShortFailingSequence() {
        // A deliberately false invariant ("no ad is ever consumed") must shrink to a few steps.
        var found = false
        for seed: UInt64 in 1...200 {
            let steps = ModelStep.generate(seed: seed)
            let fails = { (steps: [ModelStep]) -> Bool in
                let run = ModelRun(seed: seed)
                run.run(steps)
                return run.loader.stats().contains { $0.consumed > 0 }
            }
            guard fails(steps) else { continue }
            let shortest = ModelRun.shrink(steps: steps, fails: fails)
            #expect(fails(shortest))
            // Load, borrow, return shown: at least 3 steps; deletion should get close to that.
            #expect(shortest.count <= 6, "shrunk to \(shortest)")
            #expect(shortest.count < steps.count)
            found = true
            break
        }
        #expect(found)
    }
}

/// One step of a model sequence. Indices pick among what exists when the step runs (modulo
/// the count), so any subsequence is still a valid sequence: that is what makes shrinking work.
enum ModelStep: CustomStringConvertible, Equatable {
    case prefetch(loader: Int, unit: Int)
    case borrow(loader: Int, unit: Int, slot: Int?, waitMilliseconds: Int64, mayPark: Bool)
    case returnLease(pick: Int, shown: Bool)
    case returnUnknownLease
    case cancelParked(pick: Int)
    case advance(milliseconds: Int64)
    case succeed(pick: Int, fill: Int?, sourceExpiryMilliseconds: Int64?)
    case fail(pick: Int, code: Int)
    case setEnabled(loader: Int, Bool)

    var description: String {
        switch self {
        case .prefetch(let l, let u): "prefetch(loader: \(l), unit: \(u))"
        case .borrow(let l, let u, let s, let w, let mayPark):
            "borrow(loader: \(l), unit: \(u), slot: \(s.map(String.init) ?? "nil"), wait: \(w) ms\(mayPark ? "" : ", may not park"))"
        case .returnLease(let p, let shown): "return(lease #\(p), shown: \(shown))"
        case .returnUnknownLease: "return(unknown lease)"
        case .cancelParked(let p): "cancel(parked #\(p))"
        case .advance(let ms): "advance(\(ms) ms)"
        case .succeed(let p, let f, let e):  // picks are taken modulo what exists
            "succeed(request #\(p), fill: \(f.map(String.init) ?? "all"), sourceExpiry: \(e.map { "+\($0) ms" } ?? "none"))"
        case .fail(let p, let c): "fail(request #\(p), \(ModelRun.codes[c]))"
        case .setEnabled(let l, let on): "setEnabled(loader: \(l), \(on))"
        }
    }

    static func generate(seed: UInt64) -> [ModelStep] {
        var random = SplitMix64(seed: seed ^ 0x5354_4550_5321)
        func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        let count = 30 + below(70)
        var steps: [ModelStep] = []
        for _ in 0..<count {
            let roll = below(100)
            let step: ModelStep
            switch roll {
            case 0..<12: step = .prefetch(loader: below(2), unit: below(2))
            case 12..<36:
                let wait: Int64 = below(3) == 0 ? Int64(1 + below(4_000)) : 0
                // Sometimes the caller is at its parked-borrow limit.
                let mayPark = below(4) != 0
                step = .borrow(
                    loader: below(2), unit: below(2), slot: below(4) == 0 ? nil : below(3), waitMilliseconds: wait,
                    mayPark: mayPark)
            case 36..<50: step = .returnLease(pick: below(8), shown: below(2) == 0)
            case 50..<52: step = .returnUnknownLease
            case 52..<55: step = .cancelParked(pick: below(4))
            case 55..<67:
                step = .advance(milliseconds: below(4) == 0 ? Int64(10_000 + below(60_000)) : Int64(1 + below(3_000)))
            case 67..<87:
                let fill: Int? = below(3) == 0 ? below(6) : nil
                let expiry: Int64? = below(3) == 0 ? Int64(below(20_000)) : nil
                step = .succeed(pick: below(8), fill: fill, sourceExpiryMilliseconds: expiry)
            case 87..<96: step = .fail(pick: below(8), code: below(3))
            default: step = .setEnabled(loader: below(2), below(3) != 0)
            }
            steps.append(step)
        }
        return steps
    }
}
