import AdLoaderCore
import AdLoaderTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resident set size of this process in bytes, from `/proc/self/status` (`VmRSS`).
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix("VmRSS:") else { continue }
        let digits = text.dropFirst(6).filter { $0.isNumber }
        return (Int(String(digits)) ?? 0) * 1_024
    }
    return 0
}

/// A fixed clock and a scheduler that only queues: used to draw ad contents from the
/// synthetic source without any timer machinery.
final class QueueScheduler: AdClock, AdScheduler {
    let now = AdInstant(unixMilliseconds: 1_780_000_000_000)
    private var actions: [() -> Void] = []

    private final class Task: ScheduledTask {
        func cancel() {}
    }

    func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask {
        actions.append(action)
        return Task()
    }

    func runAll() {
        while !actions.isEmpty {
            let batch = actions
            actions.removeAll(keepingCapacity: true)
            for action in batch { action() }
        }
    }
}

/// An instant demand source for the scaling runs: hands out prepared contents and answers
/// only when the benchmark calls ``deliverAll()``, so loading never counts in a timed span.
final class PreparedSource: DemandSource {
    var contents: [DeliveredAd]
    private var next = 0
    private var pending: [(count: Int, completion: (Result<[DeliveredAd], UpstreamError>) -> Void)] = []
    private(set) var requests = 0

    init(contents: [DeliveredAd]) {
        self.contents = contents
        // Room for every refill request of a full pool up front: growing this list inside a
        // timed sweep callback would be a large allocation there, which a real source does
        // not make (see BENCHMARKS.md, glibc's deferred consolidation).
        pending.reserveCapacity(contents.count / 5 + 1_024)
    }

    var pendingCount: Int { pending.count }

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        requests += 1
        pending.append((count, completion))
    }

    /// Answers every pending request, cycling through the prepared contents.
    func deliverAll() {
        let answering = pending
        pending.removeAll(keepingCapacity: true)
        for (count, completion) in answering {
            var ads: [DeliveredAd] = []
            ads.reserveCapacity(count)
            for _ in 0..<count {
                ads.append(contents[next % contents.count])
                next += 1
            }
            completion(.success(ads))
        }
    }

    /// Forgets pending requests without answering (the run is over).
    func dropPending() {
        pending.removeAll()
    }
}

/// CPU time of the calling thread: unlike wall time, it leaves out the time the thread
/// waited for a core on a shared machine.
func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
}

/// A scheduler over the run's ``ManualClock`` that times each callback it runs: the loop
/// pause one callback causes, since a daemon's loop serves I/O between callbacks.
final class TimingScheduler: AdScheduler {
    private let clock: ManualClock
    /// Callbacks run since ``reset()``, the longest of them (wall and thread CPU time; the
    /// two maxima may be different callbacks) and the total wall time.
    private(set) var callbacks = 0
    private(set) var longest: Duration = .zero
    private(set) var longestCPU: Duration = .zero
    private(set) var total: Duration = .zero

    init(clock: ManualClock) {
        self.clock = clock
    }

    func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask {
        clock.schedule(at: deadline) { [unowned self] in
            let cpu = threadCPUTime()
            let begin = ContinuousClock.now
            action()
            let elapsed = ContinuousClock.now - begin
            let elapsedCPU = threadCPUTime() - cpu
            callbacks += 1
            total += elapsed
            if elapsed > longest { longest = elapsed }
            if elapsedCPU > longestCPU { longestCPU = elapsedCPU }
        }
    }

    func reset() {
        callbacks = 0
        longest = .zero
        longestCPU = .zero
        total = .zero
    }
}
