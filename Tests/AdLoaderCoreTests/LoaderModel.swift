import AdLoaderCore
import AdLoaderTestSupport

@testable import AdLoaderCore

/// Runs one model sequence against a real loader and checks the invariants after each step.
final class ModelRun {
    static let codes: [UpstreamError.Code] = [.retryable, .unreachable, .final]
    static let units = ["unit-a", "unit-b"]
    static let slots = ["slot-0", "slot-1", "slot-2", "slot-3"]

    struct PoolKey: Hashable, CustomStringConvertible {
        var loader: String
        var unit: String
        var description: String { "\(loader)/\(unit)" }
    }

    struct OpenLease {
        var pool: PoolKey
        var adID: String
        var slot: String?
        var adExpiresAt: AdInstant?
        var leaseExpiresAt: AdInstant?
        var showCount = 0
        var dropped = false
    }

    struct Parked {
        var handle: any ParkedBorrow
        var pool: PoolKey
        var slot: String?
        var deadline: AdInstant
        var id: Int
    }

    let clock = ManualClock()
    let source = ModelSource()
    let configurations: [LoaderConfiguration]
    let loader: NativeAdvertisementLoader
    private(set) var violations: [String] = []
    private(set) var eventLog: [AdEvent] = []
    /// How often interesting things happened, so the test can prove it exercised them.
    private(set) var coverage: [String: Int] = [:]
    private var stepIndex = -1
    private var openLeases: [UInt64: OpenLease] = [:]
    private var leaseOrder: [UInt64] = []
    private var endedLeases: [UInt64] = []
    /// How each ended lease ended: the phrase its NOT_FOUND message must carry.
    private var endedHow: [UInt64: String] = [:]
    /// When a borrow or prefetch last named each pool (its demand), for the idle rules.
    private var lastDemand: [PoolKey: AdInstant] = [:]
    private var everLeased = Set<UInt64>()
    private var parked: [Parked] = []
    private var nextParkedID = 0
    private var enabled: [Bool]
    private var requestsWhenDisabled: [Int]
    /// The pools the loader must have: created by a prefetch or borrow within `maximumPools`.
    private var pooled = Set<PoolKey>()
    /// The source's request-rate budget (half the seeds have one).
    let budget: RequestRateBudget?
    /// The daemon-wide memory budget (``NativeAdvertisementLoader/maximumAds``; half the seeds).
    private(set) var memoryBudget: Int?
    /// Per pool, the earliest time a request may go after its last failure: the least retry
    /// delay (less the jitter), until an answer comes; and the failures' Retry-After, whatever
    /// answers meanwhile.
    private var backoffUntil: [PoolKey: AdInstant] = [:]
    private var retryAfterUntil: [PoolKey: AdInstant] = [:]
    /// The model's own token bucket for the budget: tokens left after the last request, and when.
    private var budgetTokens = 0.0
    private var budgetCheckedAt: AdInstant

    init(seed: UInt64) {
        configurations = Self.configurations(seed: seed)
        budget = Self.budget(seed: seed)
        budgetTokens = budget?.capacity ?? 0
        budgetCheckedAt = clock.now
        enabled = configurations.map(\.enabled)
        requestsWhenDisabled = configurations.map { _ in 0 }
        source.limits = Dictionary(uniqueKeysWithValues: configurations.map { ($0.name, $0.numberOfAdvertisements) })
        // A valid configuration by construction: a throw here is a test bug worth crashing on.
        loader = try! NativeAdvertisementLoader(
            loaders: configurations, sources: ["model": source], budgets: budget.map { ["model": $0] } ?? [:],
            clock: clock, scheduler: clock, idSeed: seed)
        memoryBudget = Self.memoryBudget(seed: seed)
        if let memoryBudget { loader.maximumAds = memoryBudget }
        _ = loader.addObserver { [unowned self] in observe($0) }
        source.onRequest = { [unowned self] in checkRequest(loader: $0, unit: $1, count: $2) }
    }

    static func configurations(seed: UInt64) -> [LoaderConfiguration] {
        var random = SplitMix64(seed: seed ^ 0x434F_4E46_4947)
        func pick(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
        return ["default", "other"].map { name in
            var c = LoaderConfiguration(name: name)
            c.source = "model"
            c.keywords = [name]
            c.numberOfAdvertisements = pick(1...5)
            c.maximumRetainedAdvertisements = pick(1...12)
            c.lifetime = .milliseconds(pick(5_000...60_000))
            c.sweepInterval = .milliseconds(pick(1_000...20_000))
            c.showCountThreshold = pick(1...3)
            c.leaseTimeout = .milliseconds(pick(2_000...40_000))
            c.maximumBorrowWait = .seconds(5)
            c.retry.delay = .milliseconds(pick(100...5_000))
            c.retry.multiplier = pick(0...1) == 0 ? 1 : 2
            c.retry.maximumDelay = .seconds(20)
            c.retry.jitter = pick(0...1) == 0 ? 0 : 0.3
            c.retry.maximumCount = pick(0...3)
            c.retry.probeInterval = .milliseconds(pick(1_000...10_000))
            // 1 of 3 loaders can pool only one of the two ad units.
            c.maximumPools = pick(1...3)
            // Pool economics: both sizings, a small concurrency cap, a minimum remaining life
            // below the lifetime (sometimes the default, the lease timeout), idle pools.
            c.sizing = pick(0...1) == 0 ? .demand : .fixed
            c.maximumConcurrentRequests = pick(1...3)
            if c.leaseTimeout >= c.lifetime || pick(0...1) == 0 {
                c.minimumRemainingLife = .milliseconds(pick(0...Int(c.lifetime.milliseconds / 2)))
            }
            c.idleTimeout = .milliseconds(pick(20_000...120_000))
            c.poolRemovalTimeout = c.idleTimeout + .milliseconds(pick(0...60_000))
            return c
        }
    }

    /// The model source's request-rate budget: none for half the seeds, else 0.2 to 20
    /// requests per second (drawn apart from the loaders, so their settings stay per seed).
    static func budget(seed: UInt64) -> RequestRateBudget? {
        var random = SplitMix64(seed: seed ^ 0x4255_4447_4554)
        let rates = [0.2, 0.5, 1, 2, 5, 20]
        guard random.next() % 2 == 0 else { return nil }
        return RequestRateBudget(maximumRequestsPerSecond: rates[Int(random.next() % UInt64(rates.count))])
    }

    /// A memory budget of 3...40 ads for half the seeds (drawn apart from the other settings).
    static func memoryBudget(seed: UInt64) -> Int? {
        var random = SplitMix64(seed: seed ^ 0x4D45_4D4F_5259)
        guard random.next() % 2 == 0 else { return nil }
        return 3 + Int(random.next() % 38)
    }

    static func describeConfiguration(seed: UInt64) -> String {
        "memory \(memoryBudget(seed: seed).map(String.init) ?? "none"); budget \(budget(seed: seed).map { "\($0.maximumRequestsPerSecond)/s" } ?? "none"); "
            + configurations(seed: seed).map {
                "\($0.name): batch \($0.numberOfAdvertisements), max \($0.maximumRetainedAdvertisements), "
                    + "lifetime \($0.lifetime), sweep \($0.sweepInterval), shows \($0.showCountThreshold), "
                    + "lease \($0.leaseTimeout), retry \($0.retry.delay) x\($0.retry.multiplier) "
                    + "max \($0.retry.maximumCount), probe \($0.retry.probeInterval), pools \($0.maximumPools), "
                    + "sizing \($0.sizing), cap \($0.maximumConcurrentRequests), min life \($0.effectiveMinimumRemainingLife), "
                    + "idle \($0.idleTimeout), removal \($0.poolRemovalTimeout)"
            }.joined(separator: "; ")
    }

    /// The first violation of running `steps` for `seed`, or nil when all invariants hold.
    static func failure(seed: UInt64, steps: [ModelStep]) -> String? {
        let run = ModelRun(seed: seed)
        run.run(steps)
        return run.violations.first
    }

    /// The shortest subsequence of `steps` found that still fails for `seed`.
    static func shrink(seed: UInt64, steps: [ModelStep]) -> [ModelStep] {
        shrink(steps: steps) { failure(seed: seed, steps: $0) != nil }
    }

    /// Delta debugging by deletion: drop chunks, halving the chunk size, until no single
    /// step can be deleted without the failure going away.
    static func shrink(steps: [ModelStep], fails: ([ModelStep]) -> Bool) -> [ModelStep] {
        var best = steps
        var chunk = max(1, best.count / 2)
        while true {
            var removedAny = false
            var start = 0
            while start < best.count {
                var candidate = best
                candidate.removeSubrange(start..<min(best.count, start + chunk))
                if fails(candidate) {
                    best = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removedAny { return best }
            if !removedAny { chunk = max(1, chunk / 2) }
        }
    }

    func run(_ steps: [ModelStep]) {
        for (index, step) in steps.enumerated() {
            stepIndex = index
            currentStep = step
            apply(step)
            checkState()
            if !violations.isEmpty { return }
        }
    }

    private func violation(_ message: String) {
        violations.append("step \(stepIndex) at \(clock.now): \(message)")
    }

    // MARK: - Steps

    private func apply(_ step: ModelStep) {
        switch step {
        case .prefetch(let l, let u):
            let pool = PoolKey(loader: configurations[l].name, unit: Self.units[u])
            let refused = enabled[l] && !admits(pool, loaderIndex: l)
            do {
                lastDemandCandidate = pool
                defer { lastDemandCandidate = nil }
                try loader.prefetch(adUnitID: pool.unit, loader: pool.loader)
                if !enabled[l] { violation("prefetch on disabled \(pool.loader) succeeded") }
                if refused { violation("prefetch of \(pool) over the pool cap succeeded") }
                pooled.insert(pool)
                lastDemand[pool] = clock.now
            } catch {
                if !isExpected(error, refused: refused, enabled: enabled[l]) { violation("prefetch threw \(error)") }
            }
        case .borrow(let l, let u, let s, let wait, let mayPark):
            borrow(
                loaderIndex: l, pool: PoolKey(loader: configurations[l].name, unit: Self.units[u]),
                slot: s.map { Self.slots[$0] }, wait: .milliseconds(wait), mayPark: mayPark)
        case .returnLease(let pick, let shown):
            guard !leaseOrder.isEmpty else { return }
            returnLease(leaseOrder[pick % leaseOrder.count], shown: shown)
        case .returnUnknownLease:
            let id = endedLeases.last ?? 0
            do {
                try loader.returnLease(id, shown: true)
                violation("returning ended lease \(id) succeeded")
            } catch {
                if error.code != .notFound || error.field != "lease_id" { violation("unknown lease: \(error)") }
                // NOT_FOUND says how the lease ended, or that it never existed.
                let phrase = id == 0 ? "never lent" : endedHow[id] ?? "?"
                if !error.message.contains(phrase) {
                    violation("NOT_FOUND for lease \(id) says \"\(error.message)\", expected \(phrase)")
                }
                coverage["not found \(phrase)", default: 0] += 1
            }
        case .cancelParked(let pick):
            guard !parked.isEmpty else { return }
            let entry = parked.remove(at: pick % parked.count)
            entry.handle.cancel()
        case .advance(let milliseconds):
            clock.advance(by: .milliseconds(milliseconds))
        case .succeed(let pick, let fill, let expiry):
            guard !source.pending.isEmpty else { return }
            let index = pick % source.pending.count
            let answered = source.pending[index]
            if min(fill ?? answered.count, answered.count) > 0 {
                let pool = PoolKey(loader: answered.loader, unit: answered.unit)
                var life = configurations.first { $0.name == answered.loader }!.lifetime
                if let expiry { life = min(life, .milliseconds(expiry)) }
                if life > .zero { shortestLife[pool] = min(shortestLife[pool] ?? life, life) }
            }
            source.succeed(index, fill: fill, sourceExpiry: expiry.map { clock.now + .milliseconds($0) })
        case .fail(let pick, let code):
            guard !source.pending.isEmpty else { return }
            let index = pick % source.pending.count
            let failed = source.pending[index]
            let pool = PoolKey(loader: failed.loader, unit: failed.unit)
            // Every third failure carries a Retry-After of 1...7 s (an exchange's 503 or 429).
            let retryAfter: Duration? = pick % 3 == 0 ? .seconds(1 + pick % 7) : nil
            if let l = configurations.firstIndex(where: { $0.name == failed.loader }), enabled[l] {
                let retry = configurations[l].retry
                let least = Duration.milliseconds(Int64(Double(retry.delay.milliseconds) * (1 - retry.jitter)))
                let until = clock.now + least
                backoffUntil[pool] = max(backoffUntil[pool] ?? until, until)
                if let retryAfter {
                    let after = clock.now + retryAfter
                    retryAfterUntil[pool] = max(retryAfterUntil[pool] ?? after, after)
                }
            }
            if retryAfter != nil { coverage["failure with Retry-After", default: 0] += 1 }
            source.fail(index, Self.codes[code], retryAfter: retryAfter)
        case .setEnabled(let l, let on):
            let name = configurations[l].name
            isDisabling = !on
            do {
                try loader.setEnabled(on, loader: name)
            } catch {
                violation("setEnabled threw \(error)")
            }
            isDisabling = false
            // Disabling drops the pools' state, backoff included; enabling starts afresh.
            backoffUntil = backoffUntil.filter { $0.key.loader != name }
            retryAfterUntil = retryAfterUntil.filter { $0.key.loader != name }
            if !on && enabled[l] {
                unreachablePools = unreachablePools.filter { $0.loader != name }
                for id in leaseOrder where openLeases[id]?.pool.loader == name { openLeases[id]?.dropped = true }
                let gone = parked.filter { $0.pool.loader == name }
                if !gone.isEmpty { violation("\(gone.count) parked borrows of disabled \(name) still parked") }
            }
            enabled[l] = on
            requestsWhenDisabled[l] = source.requestCount(loader: name)
        }
    }

    private func borrow(loaderIndex: Int, pool: PoolKey, slot: String?, wait: Duration, mayPark: Bool) {
        let expected = slot.flatMap { slot in
            leaseOrder.first { id in
                guard let lease = openLeases[id], lease.pool == pool, lease.slot == slot, !lease.dropped,
                    let expiry = lease.adExpiresAt
                else { return false }
                return clock.now + minimumLife(pool) < expiry
            }
        }
        let parkedID = nextParkedID
        nextParkedID += 1
        lastAnswer = nil
        let deadline = clock.now + wait
        let refused = enabled[loaderIndex] && !admits(pool, loaderIndex: loaderIndex)
        let missesBefore = loader.stats(loader: pool.loader, adUnitID: pool.unit).first?.borrowMisses ?? 0
        var insideBorrow = true
        lastDemandCandidate = pool
        defer { lastDemandCandidate = nil }
        do {
            let outcome = try loader.borrow(
                adUnitID: pool.unit, loader: pool.loader, slot: slot, wait: wait, mayPark: mayPark
            ) { [unowned self] result in
                if insideBorrow { violation("whenServed called from inside borrow") }
                guard parked.contains(where: { $0.id == parkedID }) else {
                    violation("whenServed called for a borrow that is not parked (answered, cancelled or served)")
                    return
                }
                coverage["parked answered \(result)".prefix(22).description, default: 0] += 1
                parked.removeAll { $0.id == parkedID }
                answer(result, pool: pool, slot: slot, deadline: deadline)
            }
            insideBorrow = false
            if !enabled[loaderIndex] { violation("borrow on disabled \(pool.loader) succeeded") }
            if refused { violation("borrow of \(pool) over the pool cap succeeded") }
            pooled.insert(pool)
            lastDemand[pool] = clock.now
            switch outcome {
            case .answered(let result):
                answer(result, pool: pool, slot: slot, deadline: deadline)
            case .parked(let handle):
                if wait == .zero { violation("borrow without wait parked") }
                if !mayPark { violation("borrow that may not park parked") }
                if expected != nil { violation("borrow for \(slot!) parked while its lease holds") }
                parked.append(Parked(handle: handle, pool: pool, slot: slot, deadline: deadline, id: parkedID))
            case .parkingRefused:
                coverage["parking refused", default: 0] += 1
                if wait == .zero || mayPark { violation("parking refused (wait \(wait), mayPark \(mayPark))") }
                let misses = loader.stats(loader: pool.loader, adUnitID: pool.unit).first?.borrowMisses ?? 0
                if misses != missesBefore + 1 { violation("refused parking counted \(misses - missesBefore) misses") }
            }
        } catch {
            insideBorrow = false
            if !isExpected(error, refused: refused, enabled: enabled[loaderIndex]) {
                violation("borrow threw \(error)")
            }
            return
        }
        // Same slot, same lease while it holds.
        if let expected {
            guard case .leased(let lease, reused: true)? = lastAnswer, lease.id == expected else {
                violation("slot \(slot!) holds lease \(expected) but borrow answered \(String(describing: lastAnswer))")
                return
            }
        }
    }

    /// Whether a prefetch or borrow of `pool` may create it (or it exists).
    private func admits(_ pool: PoolKey, loaderIndex: Int) -> Bool {
        pooled.contains(pool) || pooled.count { $0.loader == pool.loader } < configurations[loaderIndex].maximumPools
    }

    /// Whether a prefetch or borrow error is the one expected: `.unavailable` on a disabled
    /// loader, else `.resourceExhausted` naming the limit for a new pool over the cap.
    private func isExpected(_ error: LoaderError, refused: Bool, enabled: Bool) -> Bool {
        if !enabled { return error.code == .unavailable }
        guard refused, error.code == .resourceExhausted, error.message.contains("maximumPools") else { return false }
        coverage["refused over pool cap", default: 0] += 1
        return true
    }

    /// The answer of the last synchronous borrow.
    private var lastAnswer: BorrowResult?

    private func answer(_ result: BorrowResult, pool: PoolKey, slot: String?, deadline: AdInstant) {
        lastAnswer = result
        switch result {
        case .leased(let lease, let reused):
            coverage[reused ? "reused lease" : "new lease", default: 0] += 1
            let ad = lease.ad
            if ad.loader != pool.loader || ad.adUnitID != pool.unit {
                violation("ad \(ad.id) of \(ad.loader)/\(ad.adUnitID) lent through \(pool)")
            }
            if !(clock.now < ad.expiresAt) { violation("expired ad \(ad.id) lent (expires \(ad.expiresAt))") }
            let minimum = minimumLife(pool)
            if !(clock.now + minimum < ad.expiresAt) {
                violation("ad \(ad.id) lent with less than \(minimum) left (expires \(ad.expiresAt))")
            }
            if lease.expiresAt > ad.expiresAt {
                violation("lease \(lease.id) outlives its ad (\(lease.expiresAt) > \(ad.expiresAt))")
            }
            let timeout = configurations.first { $0.name == pool.loader }!.leaseTimeout
            if lease.expiresAt > clock.now + timeout { violation("lease \(lease.id) runs past its timeout") }
            if lease.slot != slot { violation("lease slot \(lease.slot ?? "nil") for borrow slot \(slot ?? "nil")") }
            guard var open = openLeases[lease.id] else {
                violation("lease \(lease.id) answered but not open (no leased event)")
                return
            }
            if open.adID != ad.id { violation("lease \(lease.id) event ad \(open.adID) but answer ad \(ad.id)") }
            if reused {
                if slot == nil { violation("reused lease without a slot") }
                if open.adExpiresAt != ad.expiresAt { violation("reused lease changed its ad") }
                // Renewed: leaseTimeout from now, bounded by the ad's expiry.
                let renewed = min(clock.now + timeout, ad.expiresAt)
                if lease.expiresAt != renewed {
                    violation("reused lease \(lease.id) ends \(lease.expiresAt), not \(renewed)")
                }
                if lease.expiresAt != open.leaseExpiresAt { coverage["lease renewed", default: 0] += 1 }
                open.leaseExpiresAt = lease.expiresAt
                openLeases[lease.id] = open
            } else {
                open.adExpiresAt = ad.expiresAt
                open.leaseExpiresAt = lease.expiresAt
                open.showCount = ad.showCount
                openLeases[lease.id] = open
            }
            let threshold = configurations.first { $0.name == pool.loader }!.showCountThreshold
            if ad.showCount >= threshold { violation("ad \(ad.id) lent after \(ad.showCount) shows") }
        case .noAdYet:
            if clock.now < deadline { violation("noAdYet before the wait ended") }
        case .upstreamFailed:
            coverage["failed fast", default: 0] += 1
            let inFlight = source.pendingAds(loader: pool.loader, unit: pool.unit)
            if inFlight > 0 { violation("failed fast with \(inFlight) ads in flight for \(pool)") }
        case .unavailable:
            if let index = configurations.firstIndex(where: { $0.name == pool.loader }), enabled[index] {
                // Unavailable only when the loader was just disabled (the model flips after the call).
                if !isDisabling { violation("unavailable from an enabled loader") }
            }
        }
    }

    private var isDisabling = false
    /// The pool a borrow or prefetch step names while it runs: its requests are demand-driven.
    private var lastDemandCandidate: PoolKey?

    /// The least remaining life an ad of `pool` needs to be lent: the configured one, or by
    /// default the configured one lowered to a quarter of the shortest life of the ads the
    /// pool received (the minimum follows the ads' real life).
    private func minimumLife(_ pool: PoolKey) -> Duration {
        let configuration = configurations.first { $0.name == pool.loader }!
        let configured = configuration.effectiveMinimumRemainingLife
        guard configuration.followsAdLife, let shortest = shortestLife[pool] else { return configured }
        return min(configured, .milliseconds(shortest.milliseconds / 4))
    }

    /// The shortest life (load to expiry) of an ad each pool received.
    private var shortestLife: [PoolKey: Duration] = [:]

    // MARK: - Requests

    private var currentStep: ModelStep?
    /// Pools whose source last reported itself unreachable: they send single-ad probes.
    private var unreachablePools = Set<PoolKey>()

    /// Automatic requests are whole batches unless the pool was running dry (nothing
    /// available or in flight beyond its parked borrows); an explicit prefetch may end with
    /// a partial batch; a probe asks for one ad.
    private func checkRequest(loader name: String, unit: String, count: Int) {
        let pool = PoolKey(loader: name, unit: unit)
        let configuration = configurations.first { $0.name == name }!
        let batch = configuration.numberOfAdvertisements
        let requests = source.pendingRequests(loader: name, unit: unit)
        if requests > configuration.maximumConcurrentRequests {
            violation("\(pool) has \(requests) requests in flight, above \(configuration.maximumConcurrentRequests)")
        }
        checkBudget()
        if let until = backoffUntil[pool], clock.now < until {
            violation("request for \(pool) at \(clock.now), before its backoff ends at \(until) (no answer since)")
        }
        if let until = retryAfterUntil[pool], clock.now < until {
            violation("request for \(pool) at \(clock.now), before its Retry-After ends at \(until)")
        }
        if backoffUntil[pool] != nil { coverage["request after a backoff", default: 0] += 1 }
        if retryAfterUntil[pool] != nil { coverage["request after a Retry-After", default: 0] += 1 }
        if let memoryBudget, loader.adsHeld > memoryBudget {
            violation("request takes the ads held to \(loader.adsHeld), above the memory budget \(memoryBudget)")
        }
        if lastDemandCandidate != pool, let demand = lastDemand[pool], clock.now - demand >= configuration.idleTimeout {
            violation("automatic request for idle \(pool) (last demand \(demand))")
        }
        if count == batch {
            coverage["request whole batch", default: 0] += 1
            return
        }
        if case .prefetch? = currentStep {
            coverage["request prefetch partial", default: 0] += 1
            return
        }
        // A prefetch that waited for the budget completes when its turn comes, partial rest included.
        if budgetWait(pool)?.amount == .complete {
            coverage["request prefetch partial after a budget wait", default: 0] += 1
            return
        }
        if count == 1 && unreachablePools.contains(pool) {
            coverage["request probe", default: 0] += 1
            return
        }
        guard let stats = loader.stats(loader: name, adUnitID: unit).first else {
            violation("request for \(pool) without a pool")
            return
        }
        // The loader counts the request in flight before sending it.
        if stats.available + stats.inFlight - count <= stats.parkedBorrows {
            coverage["request dry partial", default: 0] += 1
            return
        }
        violation("automatic request for \(count) ads (batch \(batch)) while \(pool) was not dry: \(stats)")
    }

    /// The top-up `pool` has waiting for the budget (being served while its request goes out).
    private func budgetWait(_ pool: PoolKey) -> AdPool.BudgetWait? {
        guard let live = loader.entries[pool.loader]?.pools[AdLoaderCore.PoolKey(adUnitID: pool.unit)] else {
            return nil
        }
        if let wait = live.budgetWait { return wait }
        guard let serving = loader.budgets["model"]?.serving, serving.pool == ObjectIdentifier(live) else { return nil }
        return serving.wait
    }

    /// The source's requests stay within its budget: the model's own bucket (capacity, refilled
    /// at the rate since the last request) has a whole token for every request.
    private func checkBudget() {
        guard let budget else { return }
        let elapsed = Double(clock.now.unixMilliseconds - budgetCheckedAt.unixMilliseconds)
        budgetTokens = min(budget.capacity, budgetTokens + elapsed * budget.maximumRequestsPerSecond / 1_000)
        budgetCheckedAt = clock.now
        if budgetTokens < 1 - 1e-9 {
            violation("request beyond the budget of \(budget.maximumRequestsPerSecond)/s (\(budgetTokens) tokens)")
        }
        budgetTokens -= 1
        if loader.budgets["model"]!.waits > 0 { coverage["budget wait", default: 0] += 1 }
    }

    private func returnLease(_ id: UInt64, shown: Bool) {
        guard let open = openLeases[id], let expiry = open.adExpiresAt else { return }
        let threshold = configurations.first { $0.name == open.pool.loader }!.showCountThreshold
        let shownBefore = source.shownNotices[open.adID] ?? 0
        let expected: ReturnOutcome =
            if open.dropped { .removed } else if shown && open.showCount + 1 >= threshold {
                .consumed
            } else if clock.now
                + minimumLife(open.pool) >= expiry
            { .expired } else { .backInPool }
        do {
            let outcome = try loader.returnLease(id, shown: shown)
            if outcome != expected { violation("return of lease \(id) answered \(outcome), expected \(expected)") }
            if openLeases[id] != nil { violation("lease \(id) still open after its return") }
            // A shown return is one shown notice, counting this show; an unshown one is none.
            let shownAfter = source.shownNotices[open.adID] ?? 0
            if shownAfter != (shown ? open.showCount + 1 : shownBefore) {
                violation("return of lease \(id) (shown: \(shown)): shown notices at \(shownAfter), was \(shownBefore)")
            }
            if shown { coverage["notice shown", default: 0] += 1 }
        } catch {
            violation("return of open lease \(id) threw \(error)")
        }
    }

    // MARK: - Events

    private func observe(_ event: AdEvent) {
        eventLog.append(event)
        // Observers run once the loader's state is settled: the books balance at every event.
        for stats in loader.stats(loader: event.loader, adUnitID: event.adUnitID) where !stats.isBalanced {
            violation("accounting off at \(event.kind) event: \(stats)")
        }
        coverage[
            "\(event.kind) \(event.reason.map { "\($0)" } ?? "")\(event.error.map { "\($0.code)" } ?? "")", default: 0] +=
            1
        switch event.kind {
        case .loadFinished:
            let pool = PoolKey(loader: event.loader, unit: event.adUnitID)
            guard let index = configurations.firstIndex(where: { $0.name == event.loader }), enabled[index] else {
                break
            }
            if let error = event.error {
                if error.code == .unreachable { unreachablePools.insert(pool) }
            } else {
                // An answer ends the failure backoff (after an outage too): filling resumes at once.
                backoffUntil[pool] = nil
                unreachablePools.remove(pool)
            }
        case .leased:
            guard let id = event.leaseID, let adID = event.adID else {
                violation("leased event without lease or ad id")
                return
            }
            if id == 0 || everLeased.contains(id) { violation("lease id \(id) is zero or reused") }
            everLeased.insert(id)
            let pool = PoolKey(loader: event.loader, unit: event.adUnitID)
            for other in openLeases.values where other.adID == adID {
                violation("ad \(adID) leased twice (slots \(other.slot ?? "nil") and \(event.slot ?? "nil"))")
            }
            if let slot = event.slot,
                openLeases.values.contains(where: { $0.pool == pool && $0.slot == slot })
            {
                violation("slot \(slot) of \(pool) given a second lease")
            }
            openLeases[id] = OpenLease(pool: pool, adID: adID, slot: event.slot)
            leaseOrder.append(id)
        case .expired:
            if let adID = event.adID { droppedAds.append((adID, .expired)) }
        case .removed:
            guard let adID = event.adID, let reason = event.reason else {
                violation("removed event without ad id or reason")
                return
            }
            let drop: AdDropReason
            switch reason {
            case .consumed: drop = .consumed
            case .disabled: drop = .disabled
            case .shutdown: drop = .shutdown
            case .invalidated: drop = .invalidated
            case .reconfigured: drop = .reconfigured
            case .memoryBudget:
                drop = .memoryBudget
                coverage["dropped for memory", default: 0] += 1
                if openLeases.values.contains(where: { $0.adID == adID }) {
                    violation("leased ad \(adID) dropped for memory")
                }
            case .reclaimed, .expired, .enabled, .added, .removed:
                violation("removed event with reason \(reason)")
                return
            }
            droppedAds.append((adID, drop))
        case .returned:
            guard let id = event.leaseID, openLeases.removeValue(forKey: id) != nil else {
                violation("returned event for a lease that is not open")
                return
            }
            leaseOrder.removeAll { $0 == id }
            endedLeases.append(id)
            endedHow[id] =
                switch event.reason {
                case nil: "already returned"
                case .reclaimed?: "reclaimed"
                default: "ended by the loader"
                }
        case .poolRemoved:
            let pool = PoolKey(loader: event.loader, unit: event.adUnitID)
            coverage["pool removed", default: 0] += 1
            shortestLife[pool] = nil  // a new pool starts from the configured minimum
            guard let configuration = configurations.first(where: { $0.name == event.loader }) else { break }
            if let demand = lastDemand[pool], clock.now - demand < configuration.poolRemovalTimeout {
                violation("\(pool) removed \(clock.now - demand) after its last demand")
            }
            if openLeases.values.contains(where: { $0.pool == pool }) || parked.contains(where: { $0.pool == pool })
                || source.pendingAds(loader: pool.loader, unit: pool.unit) > 0
            {
                violation("\(pool) removed while it held leases, parked borrows or requests")
            }
            pooled.remove(pool)
        default:
            break
        }
    }

    // MARK: - Invariants

    /// Ads reported expired or removed since the last check, with the reason.
    private var droppedAds: [(adID: String, reason: AdDropReason)] = []
    /// Ad ids whose drop was checked against the source's notices.
    private var checkedDrops = Set<String>()

    /// The source heard of every ad dropped unshown, with the event's reason, and of no other.
    private func checkDropNotices() {
        for (adID, reason) in droppedAds {
            if !checkedDrops.insert(adID).inserted { violation("ad \(adID) dropped twice") }
            let notice = source.dropNotices[adID]
            if source.shownNotices[adID] == nil {
                if notice != reason {
                    violation("ad \(adID) dropped (\(reason)) unshown, notice: \(String(describing: notice))")
                }
                coverage["notice dropped \(reason)", default: 0] += 1
            } else if let notice {
                violation("ad \(adID) shown, then dropped (\(reason)) with a drop notice (\(notice))")
            }
        }
        droppedAds.removeAll()
        for adID in source.dropNotices.keys where !checkedDrops.contains(adID) {
            violation("drop notice for ad \(adID) without an expired or removed event")
        }
        if let bad = source.badNotice { violation(bad) }
    }

    private func checkState() {
        checkDropNotices()
        let pools = Set(loader.stats().map { PoolKey(loader: $0.loader, unit: $0.adUnitID) })
        if let memoryBudget {
            let held = loader.stats().reduce(0) { $0 + $1.available + $1.leased + $1.inFlight }
            if held > memoryBudget || loader.adsHeld > memoryBudget {
                violation(
                    "\(held) ads loaded + in flight (\(loader.adsHeld) counted), above the memory budget \(memoryBudget)"
                )
            }
            if held == memoryBudget { coverage["memory budget full", default: 0] += 1 }
        }
        if pools != pooled {
            violation("pools \(pools.sorted { $0.description < $1.description }) but model has \(pooled.count)")
        }
        for (index, configuration) in configurations.enumerated() {
            let name = configuration.name
            if !enabled[index] && source.requestCount(loader: name) != requestsWhenDisabled[index] {
                violation("disabled loader \(name) sent a request")
            }
            for stats in loader.stats(loader: name) {
                let pool = PoolKey(loader: name, unit: stats.adUnitID)
                let held = stats.available + stats.leased + stats.inFlight
                if held > configuration.maximumRetainedAdvertisements {
                    violation(
                        "\(pool) holds \(held) loaded + in flight, above \(configuration.maximumRetainedAdvertisements)"
                    )
                }
                if !(stats.loaded == UInt64(stats.available) + UInt64(stats.leased) + stats.consumed + stats.expired
                    + stats.removed)
                {
                    violation("\(pool) accounting off: \(stats)")
                }
                let leased = openLeases.values.filter { $0.pool == pool }.count
                if stats.leased != leased { violation("\(pool) reports \(stats.leased) leased, model has \(leased)") }
                let inFlight = source.pendingAds(loader: name, unit: stats.adUnitID)
                if stats.inFlight != inFlight {
                    violation("\(pool) reports \(stats.inFlight) in flight, source has \(inFlight)")
                }
                if let demand = lastDemand[pool], stats.idle != (clock.now - demand >= configuration.idleTimeout) {
                    violation("\(pool) reports idle \(stats.idle), last demand \(demand)")
                }
                if stats.idle { coverage["idle pool", default: 0] += 1 }
                let waiting = parked.filter { $0.pool == pool }.count
                if stats.parkedBorrows != waiting {
                    violation("\(pool) reports \(stats.parkedBorrows) parked, model has \(waiting)")
                }
            }
        }
        for (id, lease) in openLeases {
            if let expiresAt = lease.leaseExpiresAt, expiresAt <= clock.now {
                violation("lease \(id) open past its timeout \(expiresAt)")
            }
            if let expiresAt = lease.leaseExpiresAt, let adExpiresAt = lease.adExpiresAt, expiresAt > adExpiresAt {
                violation("lease \(id) outlives its ad")
            }
        }
        if let bad = source.badRequest { violation(bad) }
    }
}
