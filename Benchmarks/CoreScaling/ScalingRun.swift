import AdLoaderCore
import AdLoaderTestSupport
import AdSources

/// One pool of `size` ads, measured in a process of its own (so resident memory starts clean).
struct ScalingRun {
    static let adUnitID = "scale"
    static let loaderName = "scale"
    /// Every hundredth ad expires early (by its source expiry), for the 1% sweep.
    static let earlyEvery = 100

    let size: Int
    let operations: Int
    /// Registers a counting observer, as the daemon's metrics and Watch do.
    var observer = true

    struct Result {
        var size = 0
        var contentBytesPerAd = 0.0
        var totalBytesPerAd = 0.0
        var beyondContentBytesPerAd = 0.0
        /// The content's strings, counted from their lengths (not from RSS).
        var contentPayloadBytesPerAd = 0.0
        var fillSeconds = 0.0
        var noopSweeps = 0
        var noopSweepMaxMicroseconds = 0.0
        var noopSweepMedianMicroseconds = 0.0
        var onePercentExpired = 0
        /// The longest single scheduler callback (loop pause) of the expiring sweep.
        var onePercentSweepMilliseconds = 0.0
        var allExpired = 0
        var allSweepMilliseconds = 0.0
        var allSweepRefillRequests = 0
        var borrowReturnNanoseconds = 0.0
        var borrowReturnSlotNanoseconds = 0.0
        var borrowShowRefillNanoseconds = 0.0
        /// All callbacks of the expiring sweep: their summed time and how many there were.
        var onePercentSweepTotalMilliseconds = 0.0
        var onePercentSweepCallbacks = 0
        var allSweepTotalMilliseconds = 0.0
        var allSweepCallbacks = 0
        /// The longest single callback of the expiring sweep in thread CPU time (no preemption).
        var onePercentSweepCPUMilliseconds = 0.0
        var allSweepCPUMilliseconds = 0.0

        static let fields = [
            "size", "content_bytes_per_ad", "total_bytes_per_ad", "beyond_content_bytes_per_ad",
            "content_payload_bytes_per_ad", "fill_s", "noop_sweeps", "noop_sweep_max_us", "noop_sweep_median_us",
            "one_percent_expired", "one_percent_sweep_ms", "all_expired", "all_sweep_ms", "all_sweep_refill_requests",
            "borrow_return_ns", "borrow_return_slot_ns", "borrow_show_refill_ns", "one_percent_sweep_total_ms",
            "one_percent_sweep_callbacks", "all_sweep_total_ms", "all_sweep_callbacks", "one_percent_sweep_cpu_ms",
            "all_sweep_cpu_ms",
        ]

        var values: [String] {
            [
                String(size), fmt(contentBytesPerAd), fmt(totalBytesPerAd), fmt(beyondContentBytesPerAd),
                fmt(contentPayloadBytesPerAd), fmt(fillSeconds, 3), String(noopSweeps),
                fmt(noopSweepMaxMicroseconds, 2),
                fmt(noopSweepMedianMicroseconds, 2), String(onePercentExpired), fmt(onePercentSweepMilliseconds, 3),
                String(allExpired), fmt(allSweepMilliseconds, 3), String(allSweepRefillRequests),
                fmt(borrowReturnNanoseconds), fmt(borrowReturnSlotNanoseconds), fmt(borrowShowRefillNanoseconds),
                fmt(onePercentSweepTotalMilliseconds, 3), String(onePercentSweepCallbacks),
                fmt(allSweepTotalMilliseconds, 3), String(allSweepCallbacks), fmt(onePercentSweepCPUMilliseconds, 3),
                fmt(allSweepCPUMilliseconds, 3),
            ]
        }

        init() {}

        init?(values: [String]) {
            guard values.count == Self.fields.count else { return nil }
            let numbers = values.map { Double($0) ?? .nan }
            size = Int(numbers[0])
            contentBytesPerAd = numbers[1]
            totalBytesPerAd = numbers[2]
            beyondContentBytesPerAd = numbers[3]
            contentPayloadBytesPerAd = numbers[4]
            fillSeconds = numbers[5]
            noopSweeps = Int(numbers[6])
            noopSweepMaxMicroseconds = numbers[7]
            noopSweepMedianMicroseconds = numbers[8]
            onePercentExpired = Int(numbers[9])
            onePercentSweepMilliseconds = numbers[10]
            allExpired = Int(numbers[11])
            allSweepMilliseconds = numbers[12]
            allSweepRefillRequests = Int(numbers[13])
            borrowReturnNanoseconds = numbers[14]
            borrowReturnSlotNanoseconds = numbers[15]
            borrowShowRefillNanoseconds = numbers[16]
            onePercentSweepTotalMilliseconds = numbers[17]
            onePercentSweepCallbacks = Int(numbers[18])
            allSweepTotalMilliseconds = numbers[19]
            allSweepCallbacks = Int(numbers[20])
            onePercentSweepCPUMilliseconds = numbers[21]
            allSweepCPUMilliseconds = numbers[22]
        }
    }

    func run() throws -> Result {
        var result = Result()
        result.size = size
        let clock = ManualClock()
        let start = clock.now

        // 1. Realistic contents from the synthetic source, all distinct, held in one array.
        let rssBefore = residentBytes()
        var contents = try makeContents(start: start)
        let rssContents = residentBytes()
        result.contentPayloadBytesPerAd = Double(contents.reduce(0) { $0 + Self.payloadBytes($1) }) / Double(size)

        // 2. One pool holding all of them; the source's copy is dropped afterwards, so the
        //    pool is the only owner of the contents.
        let source = PreparedSource(contents: contents)
        contents = []
        var configuration = LoaderConfiguration(name: Self.loaderName)
        configuration.source = "prepared"
        configuration.numberOfAdvertisements = 5
        configuration.maximumRetainedAdvertisements = size
        // A full pool of `size` ads at once: fixed sizing, every batch in flight together.
        configuration.sizing = .fixed
        configuration.maximumConcurrentRequests = size
        // The 1 % that expire at 90 s must be kept (and swept), not dropped at arrival as too short-lived.
        configuration.minimumRemainingLife = .zero
        // Nobody borrows during the simulated hour of sweeps; the pool must still refill after them.
        configuration.idleTimeout = .seconds(7_200)
        configuration.poolRemovalTimeout = .seconds(7_200)
        configuration.lifetime = .seconds(3_600)
        configuration.sweepInterval = .seconds(60)
        // Off the sweep's minute marks, so a lease-timer wakeup is never timed as a sweep.
        configuration.leaseTimeout = .seconds(250)
        // Times each callback: a sweep may run as several callbacks, the loop serving I/O between.
        let timing = TimingScheduler(clock: clock)
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["prepared": source], clock: clock, scheduler: timing, idSeed: 3)
        // The daemon always has an observer (metrics, Watch); a counter stands in for it.
        var events = 0
        if observer { _ = loader.addObserver { _ in events += 1 } }

        let fillStart = ContinuousClock.now
        try loader.prefetch(adUnitID: Self.adUnitID, loader: Self.loaderName)
        source.deliverAll()
        result.fillSeconds = seconds(ContinuousClock.now - fillStart)
        precondition(stats(loader).available == size, "pool not full: \(stats(loader))")
        source.contents = Array(source.contents.prefix(1_000))
        let rssPool = residentBytes()
        result.contentBytesPerAd = Double(rssContents - rssBefore) / Double(size)
        result.totalBytesPerAd = Double(rssPool - rssBefore) / Double(size)
        result.beyondContentBytesPerAd = Double(rssPool - rssContents) / Double(size)

        // 3. Borrow + return, unshown: the ad goes back to the pool.
        var leaseID: UInt64 = 0
        // Every borrow here is answered at once (full pool, no wait): whenServed never runs.
        let unused: (BorrowResult) -> Void = { _ in fatalError("a borrow without wait parked") }
        func take(_ outcome: BorrowOutcome) {
            if case .answered(.leased(let lease, _)) = outcome { leaseID = lease.id }
        }
        var begin = ContinuousClock.now
        for _ in 0..<operations {
            take(try loader.borrow(adUnitID: Self.adUnitID, loader: Self.loaderName, whenServed: unused))
            try loader.returnLease(leaseID, shown: false)
        }
        result.borrowReturnNanoseconds = nanoseconds(ContinuousClock.now - begin) / Double(operations)

        let slots = (0..<1_024).map { "feed-\($0)/position-7" }
        begin = ContinuousClock.now
        for index in 0..<operations {
            take(
                try loader.borrow(
                    adUnitID: Self.adUnitID, loader: Self.loaderName, slot: slots[index & 1_023], whenServed: unused))
            try loader.returnLease(leaseID, shown: false)
        }
        result.borrowReturnSlotNanoseconds = nanoseconds(ContinuousClock.now - begin) / Double(operations)

        // 4. Sweeps: every minute for an hour. At 2 min the early 1% expires; at 60 min the rest.
        //    Each is timed by its longest callback (the loop pause; the ManualClock's own
        //    bookkeeping and the timing's CPU-clock reads are outside), with the sum over its callbacks.
        var noop: [Double] = []
        while let deadline = clock.nextDeadline, deadline <= start + .seconds(3_600) {
            let expiredBefore = stats(loader).expired
            let requestsBefore = source.requests
            timing.reset()
            clock.advance(to: deadline)
            let expired = Int(stats(loader).expired - expiredBefore)
            let isSweep = (deadline - start).milliseconds % 60_000 == 0
            guard isSweep else { continue }
            if expired == 0 {
                noop.append(nanoseconds(timing.longest) / 1_000)
            } else if expired < size / 2 {
                result.onePercentExpired = expired
                result.onePercentSweepMilliseconds = nanoseconds(timing.longest) / 1_000_000
                result.onePercentSweepTotalMilliseconds = nanoseconds(timing.total) / 1_000_000
                result.onePercentSweepCallbacks = timing.callbacks
                result.onePercentSweepCPUMilliseconds = nanoseconds(timing.longestCPU) / 1_000_000
            } else {
                result.allExpired = expired
                result.allSweepMilliseconds = nanoseconds(timing.longest) / 1_000_000
                result.allSweepTotalMilliseconds = nanoseconds(timing.total) / 1_000_000
                result.allSweepCallbacks = timing.callbacks
                result.allSweepCPUMilliseconds = nanoseconds(timing.longestCPU) / 1_000_000
                result.allSweepRefillRequests = source.requests - requestsBefore
            }
        }
        noop.sort()
        result.noopSweeps = noop.count
        result.noopSweepMaxMicroseconds = noop.last ?? 0
        result.noopSweepMedianMicroseconds = noop.isEmpty ? 0 : noop[noop.count / 2]

        // 5. Borrow, show, consume, refill: the steady-state cycle, on the pool refilled after the sweep.
        source.deliverAll()
        begin = ContinuousClock.now
        for index in 0..<operations {
            take(try loader.borrow(adUnitID: Self.adUnitID, loader: Self.loaderName, whenServed: unused))
            try loader.returnLease(leaseID, shown: true)
            if index & 63 == 63 { source.deliverAll() }
        }
        result.borrowShowRefillNanoseconds = nanoseconds(ContinuousClock.now - begin) / Double(operations)
        precondition(events > 0 || !observer)
        return result
    }

    private func makeContents(start: AdInstant) throws -> [DeliveredAd] {
        let queue = QueueScheduler()
        let synthetic = try SyntheticSource(
            configuration: SyntheticSource.Configuration(latency: .zero, seed: 11), clock: queue, scheduler: queue)
        let request = AdRequest(adUnitID: Self.adUnitID)
        var contents: [DeliveredAd] = []
        contents.reserveCapacity(size)
        while contents.count < size {
            synthetic.loadAds(request, count: min(5, size - contents.count)) { result in
                if case .success(let ads) = result { contents += ads }
            }
            queue.runAll()
        }
        for index in stride(from: 0, to: size, by: Self.earlyEvery) {
            contents[index].sourceExpiry = start + .seconds(90)
        }
        return contents
    }

    /// Bytes of the content's strings (UTF-8), the part of an ad no pool design can avoid.
    static func payloadBytes(_ ad: DeliveredAd) -> Int {
        guard let content = ad.creative.nativeContent else { return 0 }
        var strings = [content.headline, content.body, content.callToAction, content.advertiser, content.clickURL]
        strings += [content.icon?.url, content.image?.url, content.price, content.store, content.adChoicesURL]
            .compactMap { $0 }
        strings += content.impressionTrackers + content.clickTrackers
        return strings.reduce(0) { $0 + $1.utf8.count }
    }

    private func stats(_ loader: NativeAdvertisementLoader) -> PoolStats {
        loader.stats(loader: Self.loaderName, adUnitID: Self.adUnitID)[0]
    }
}

func nanoseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}

func seconds(_ duration: Duration) -> Double { nanoseconds(duration) / 1e9 }

func fmt(_ value: Double, _ decimals: Int = 1) -> String {
    guard value.isFinite else { return "nan" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (abs(value) * scale).rounded()
    let whole = Int(rounded / scale)
    var text = (value < 0 && rounded > 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let digits = String(Int(rounded) - whole * Int(scale))
        text += "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
    return text
}
