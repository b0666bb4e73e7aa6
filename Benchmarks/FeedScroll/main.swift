import AdLoaderArguments
import AdLoaderCore
import AdLoaderTestSupport
import AdSources

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Feed-scroll simulation: the same seeded traces of users scrolling a feed, replayed in
/// virtual time against three ways of filling ad cells. See BENCHMARKS.md.
enum FeedScroll {
    static let adUnitID = "feed-native"

    /// The ad unit of trace unit `unit`: unit 0 is ``adUnitID``.
    static func adUnitID(_ unit: Int32) -> String { unit == 0 ? adUnitID : "\(adUnitID)-\(unit)" }
    static let loaderName = "feed"

    struct Options {
        var trace = TraceParameters()
        var warmupSeconds = 600.0
        /// Above the peak of leased ads at the default traffic (~2,250): leased ads count toward it.
        var retained = 4_000
        var sweep: [Int] = [500, 1_000, 2_000, 2_500, 3_000, 4_000, 8_000, 16_000, 32_000, 64_000]
        var source = SyntheticSource.Configuration(
            latency: .milliseconds(120), latencyJitter: .milliseconds(180), fillRate: 0.9, errorRate: 0.01, seed: 7)
        var lifetime: Duration = .seconds(3_600)
        var wait: Duration = .seconds(3)
        var outputDirectory: String?
        /// Names the output files: `<label>.csv`, `<label>-delays.dat`.
        var label = "feedscroll"
        var smoke = false
        /// A pool-economics scenario: steady, low, ramp, zipf, outage (see BENCHMARKS.md);
        /// runs adloaderd with the default configuration against fixed-size pools.
        var scenario: String?
        /// Outage window of the upstream, virtual seconds.
        var outage: ClosedRange<Double>?
        /// `maximumConcurrentRequests` of the defaults run (nil: the default, 3).
        var cap: Int?
        /// Scenarios: more defaults runs, each with one of these caps (`--caps 6,12`), in the
        /// same run as the defaults and the fixed pools.
        var moreCaps: [Int] = []
        /// `stockCover` of the defaults run, seconds (nil: the default).
        var cover: Double?
        /// Scenarios: more defaults runs, each with one of these covers in seconds (`--covers 0,60,600`).
        var moreCovers: [Double] = []
        /// The daemon-wide memory budget of the defaults run (`maximumAds`; nil: none).
        var maximumAds: Int?
        /// The memory scenario: one more defaults run that does not make room (a pool the
        /// budget refuses waits until ads expire or are consumed), the peer of the defaults.
        var memoryPeer = false
        /// `makesRoomUnderMemoryBudget` of a defaults run.
        var makesRoom = true
        /// The plan mode: the same trace (with scroll events) served by per-cell Borrow and by
        /// Plan with `planAhead` positions of look-ahead, both with the default configuration.
        var plan = false
        var planAhead = 3
    }

    static let usage = """
        usage: FeedScrollBench [--smoke] [--users N] [--duration S] [--seed N] [--warmup S]
               [--ad-every K] [--retained M] [--sweep M1,M2,...|none] [--latency MS] [--jitter MS]
               [--fill F] [--error-rate R] [--lifetime S] [--wait MS] [--out DIR] [--label NAME]
               [--scenario steady|busy|low|ramp|drop|zipf|outage|memory] [--cap N] [--caps N1,N2,...]
               [--cover S] [--covers S1,S2,...] [--maximum-ads N] [--plan] [--plan-ahead N]
        """

    /// Exits 2 with a message naming the bad option, or 0 after printing the usage for `--help`.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(arguments)
        do throws(ArgumentScanner.Failure) {
            func number() throws(ArgumentScanner.Failure) -> Double { try scanner.value(as: Double.self) }
            while let argument = scanner.next() {
                switch argument {
                case .option("--smoke"):
                    options.smoke = true
                    options.trace = .smoke
                    options.warmupSeconds = 60
                    options.retained = 100
                    options.sweep = [10, 100]
                case .option("--users"): options.trace.users = Int(try number())
                case .option("--duration"): options.trace.duration = try number()
                case .option("--seed"): options.trace.seed = UInt64(try number())
                case .option("--warmup"): options.warmupSeconds = try number()
                case .option("--ad-every"): options.trace.adEvery = Int(try number())
                case .option("--retained"): options.retained = Int(try number())
                case .option("--sweep"):
                    let text = try scanner.value()
                    options.sweep = []
                    if text != "none" {
                        for part in text.split(separator: ",") {
                            guard let number = Double(part) else {
                                throw ArgumentScanner.Failure(option: "--sweep", message: "not a number: \"\(part)\"")
                            }
                            options.sweep.append(Int(number))
                        }
                    }
                case .option("--latency"): options.source.latency = .milliseconds(Int64(try number()))
                case .option("--jitter"): options.source.latencyJitter = .milliseconds(Int64(try number()))
                case .option("--fill"): options.source.fillRate = try number()
                case .option("--error-rate"): options.source.errorRate = try number()
                case .option("--lifetime"): options.lifetime = .seconds(try number())
                case .option("--wait"): options.wait = .milliseconds(Int64(try number()))
                case .option("--out"): options.outputDirectory = try scanner.value()
                case .option("--label"): options.label = try scanner.value()
                case .option("--cap"): options.cap = Int(try number())
                case .option("--caps"):
                    let text = try scanner.value()
                    for part in text.split(separator: ",") {
                        guard let cap = Int(part), cap >= 1 else {
                            throw ArgumentScanner.Failure(option: "--caps", message: "not a cap: \"\(part)\"")
                        }
                        options.moreCaps.append(cap)
                    }
                case .option("--cover"): options.cover = try number()
                case .option("--maximum-ads"): options.maximumAds = Int(try number())
                case .option("--plan"):
                    options.plan = true
                    options.trace.scrolls = true
                case .option("--plan-ahead"):
                    options.planAhead = Int(try number())
                    guard options.planAhead >= 0 else {
                        throw ArgumentScanner.Failure(option: "--plan-ahead", message: "must be 0 or more")
                    }
                case .option("--covers"):
                    let text = try scanner.value()
                    for part in text.split(separator: ",") {
                        guard let cover = Double(part), cover >= 0 else {
                            throw ArgumentScanner.Failure(option: "--covers", message: "not a cover: \"\(part)\"")
                        }
                        options.moreCovers.append(cover)
                    }
                case .option("--scenario"):
                    let name = try scanner.value()
                    options.scenario = name
                    switch name {
                    case "steady": break
                    case "busy":
                        // The steady trace with ten times the users, on one ad unit.
                        options.trace.users = 500_000
                        options.retained = 40_000
                    case "drop":
                        // Steady, then a tenth of the arrivals from 60 min on (falling over 10 min).
                        options.trace.rampFactor = 0.1
                        options.trace.rampStart = 3_600
                        options.trace.rampEnd = 1e12
                    case "memory":
                        // 200 ad units (Zipf) under a daemon-wide budget below what they would hold;
                        // at 60 min the popularity reverses, so the popular pools of the first
                        // hour go idle holding their stock while the new popular ones need room.
                        options.trace.users = 5_000
                        options.trace.adUnits = 200
                        options.trace.unitShiftAt = 3_600
                        options.retained = 10
                        options.memoryPeer = true
                        if options.maximumAds == nil { options.maximumAds = 1_000 }
                    case "low":
                        options.trace.users = 500
                        options.warmupSeconds = 3_600
                    case "ramp":
                        // 5,000 users / 2 h, ten times that rate from 40 to 80 min (rising over
                        // the 10 min before, falling over the 10 min after); measured from 30 min.
                        options.trace.users = 5_000
                        options.trace.rampFactor = 10
                        options.trace.rampStart = 1_800
                        options.trace.rampEnd = 5_400
                        options.warmupSeconds = 1_800
                    case "zipf":
                        options.trace.users = 5_000
                        options.trace.adUnits = 200
                        options.retained = 10
                    case "outage":
                        options.outage = 3_600...4_200
                    default:
                        throw ArgumentScanner.Failure(option: "--scenario", message: "unknown scenario \"\(name)\"")
                    }
                case .option("--help"), .option("-h"):
                    print(usage)
                    exit(0)
                case .option(let name), .positional(let name): throw .unknown(name)
                }
            }
        } catch {
            fail("\(error) (try --help)")
        }
        return options
    }

    static func fail(_ message: String) -> Never {
        let line = "FeedScrollBench: \(message)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        exit(2)
    }

    /// `retained` nil: the default configuration (demand sizing); else today's fixed-size
    /// pools of `retained` ads, with the lending rules of before (no minimum remaining life,
    /// no concurrency cap, no idle time).
    static func makeLoader(_ options: Options, retained: Int?, clock: ManualClock) throws
        -> (NativeAdvertisementLoader, CountingSource)
    {
        var configuration = LoaderConfiguration(name: loaderName)
        configuration.numberOfAdvertisements = 5
        configuration.lifetime = options.lifetime
        // The trace's ad cells as placement rules (Plan only): an ad every `adEvery` cells from
        // `adEvery - 1`, with no bound a session reaches (the default 256 ads would be 1,280 cells).
        configuration.placement = PlacementRules(
            repeatingInterval: options.trace.adEvery, maximumAdsPerFeed: PlacementRules.maximumAdsLimit)
        if let cap = options.cap { configuration.maximumConcurrentRequests = cap }
        if let cover = options.cover { configuration.stockCover = .milliseconds(Int64(cover * 1_000)) }
        if let retained {
            configuration.sizing = .fixed
            configuration.maximumRetainedAdvertisements = retained
            configuration.minimumRemainingLife = .zero
            configuration.maximumConcurrentRequests = 1_000_000
            configuration.idleTimeout = .seconds(1_000_000)
            configuration.poolRemovalTimeout = .seconds(1_000_000)
        }
        let synthetic = try SyntheticSource(configuration: options.source, clock: clock, scheduler: clock)
        let source = CountingSource(inner: synthetic, clock: clock)
        source.outage = options.outage
        source.idleTimeout = retained == nil ? configuration.idleTimeout : .seconds(600)
        let loader = try NativeAdvertisementLoader(
            loaders: [configuration], sources: ["synthetic": source], clock: clock, scheduler: clock, idSeed: 1)
        if retained == nil, let maximumAds = options.maximumAds { loader.maximumAds = maximumAds }
        loader.makesRoomUnderMemoryBudget = options.makesRoom
        return (loader, source)
    }

    /// Replays the whole trace against one strategy and measures the window after the warm-up.
    static func replay(
        _ trace: Trace, _ strategy: any FeedStrategy, clock: ManualClock, recorder: Recorder, retained: Int?
    ) -> StrategyResult {
        let start = clock.now
        var before: UpstreamCounters?
        // Ad-cell events so far: gauges are sampled at the same events with or without scroll events.
        var index = -1
        for event in trace.events {
            if event.kind != .scroll { index += 1 }
            if before == nil && event.time >= recorder.warmup {
                clock.advance(to: start + .milliseconds(recorder.warmup))
                before = strategy.counters
                (strategy as? AdLoaderStrategy)?.source.measureFrom = clock.now
            }
            if let adloaderd = strategy as? AdLoaderStrategy, adloaderd.availableAtOutage == nil,
                let outage = adloaderd.source.outage, Double(event.time) >= outage.lowerBound * 1_000
            {
                clock.advance(to: start + .milliseconds(Int64(outage.lowerBound * 1_000)))
                adloaderd.availableAtOutage = adloaderd.loader.stats(loader: loaderName).reduce(0) { $0 + $1.available }
            }
            clock.advance(to: start + .milliseconds(event.time))
            let key = Int64(event.user) << 32 | Int64(event.cell)
            switch event.kind {
            case .appear: strategy.appear(key: key, user: event.user, cell: event.cell, unit: event.unit)
            case .disappear: strategy.disappear(key: key)
            case .release: strategy.release(key: key)
            case .scroll:
                strategy.scroll(user: event.user, top: event.cell, unit: event.unit)
                continue
            }
            if index & 255 == 0 { strategy.sample() }
        }
        (strategy as? AdLoaderStrategy)?.source.endMeasurement()
        // Let answers in flight land, so their ads are counted.
        clock.advance(by: .seconds(60))
        var result = StrategyResult(
            strategy: strategy.name, retained: retained, recorder: recorder,
            upstream: strategy.counters - (before ?? UpstreamCounters()))
        strategy.finish(into: &result)
        if let adloaderd = strategy as? AdLoaderStrategy, let outage = adloaderd.source.outage {
            result.outage = outageReport(recorder, outage, availableAtStart: adloaderd.availableAtOutage ?? 0)
            var appeared = 0
            var atOnce = 0
            for (index, time) in recorder.appearedAt.enumerated() where outage.contains(Double(time) / 1_000) {
                appeared += 1
                if recorder.delays[index] == 0 { atOnce += 1 }
            }
            result.outageHitRatio = appeared == 0 ? nil : Double(atOnce) / Double(appeared)
        }
        return result
    }

    /// The outage, minute by minute from one minute before it to three after: fresh ads
    /// displayed, and the share of appearances that had an ad at once.
    static func outageReport(_ recorder: Recorder, _ outage: ClosedRange<Double>, availableAtStart: Int) -> String {
        let first = Int(outage.lowerBound / 60) - 1
        let last = Int(outage.upperBound / 60) + 3
        var appeared = [Int](repeating: 0, count: last - first + 1)
        var atOnce = appeared
        for (index, time) in recorder.appearedAt.enumerated() {
            let minute = Int(time / 60_000) - first
            guard appeared.indices.contains(minute) else { continue }
            appeared[minute] += 1
            if recorder.delays[index] == 0 { atOnce[minute] += 1 }
        }
        var text =
            "available in the pool when the outage began: \(availableAtStart); by minute (outage "
            + "\(Int(outage.lowerBound / 60))..<\(Int(outage.upperBound / 60))) fresh ads displayed / % of appearances with an ad at once:"
        for minute in first...last {
            let index = minute - first
            let share = appeared[index] == 0 ? 0 : Double(atOnce[index]) * 100 / Double(appeared[index])
            text += " \(minute):\(recorder.impressionsPerMinute[minute] ?? 0)/\(Report.format(share, 0))%"
        }
        return text
    }

    static func runBaseline(_ kind: String, _ trace: Trace, _ options: Options) throws -> StrategyResult {
        let clock = ManualClock()
        let recorder = Recorder(warmup: Int64(options.warmupSeconds * 1_000))
        let source = try SyntheticSource(configuration: options.source, clock: clock, scheduler: clock)
        let strategy: any FeedStrategy =
            kind == "no-reuse"
            ? NoReuseStrategy(clock: clock, recorder: recorder, source: source)
            : ReuseOnlyStrategy(clock: clock, recorder: recorder, source: source, lifetime: options.lifetime)
        return replay(trace, strategy, clock: clock, recorder: recorder, retained: nil)
    }

    static func runAdLoader(_ trace: Trace, _ options: Options, retained: Int?) throws -> StrategyResult {
        let clock = ManualClock()
        let recorder = Recorder(warmup: Int64(options.warmupSeconds * 1_000))
        let (loader, source) = try makeLoader(options, retained: retained, clock: clock)
        let strategy = try AdLoaderStrategy(
            clock: clock, recorder: recorder, loader: loader, source: source, wait: options.wait)
        return replay(trace, strategy, clock: clock, recorder: recorder, retained: retained)
    }

    /// The plan mode: the default configuration serving the same trace through per-cell Borrow
    /// and through Plan, side by side (BENCHMARKS.md, issue 24).
    static func runPlanComparison(_ trace: Trace, _ options: Options) throws {
        let clock = ManualClock()
        let recorder = Recorder(warmup: Int64(options.warmupSeconds * 1_000))
        let (loader, source) = try makeLoader(options, retained: nil, clock: clock)
        let borrow = try AdLoaderStrategy(
            clock: clock, recorder: recorder, loader: loader, source: source, wait: options.wait)
        borrow.separation = loader.configuration(named: loaderName)?.separation
        var borrowResult = replay(trace, borrow, clock: clock, recorder: recorder, retained: nil)
        borrowResult.strategy = "adloaderd Borrow"

        let planClock = ManualClock()
        let planRecorder = Recorder(warmup: Int64(options.warmupSeconds * 1_000))
        let (planLoader, planSource) = try makeLoader(options, retained: nil, clock: planClock)
        let plan = try PlanStrategy(
            clock: planClock, recorder: planRecorder, loader: planLoader, source: planSource, ahead: options.planAhead,
            viewport: options.trace.viewport, adEvery: options.trace.adEvery)
        let planResult = replay(trace, plan, clock: planClock, recorder: planRecorder, retained: nil)
        let results = [borrowResult, planResult]
        print(
            "\nplan mode: the default configuration, per-cell Borrow (wait \(options.wait.milliseconds) ms) against Plan "
                + "(viewport \(options.trace.viewport) + \(options.planAhead) ahead), same trace")
        Report.printTable(results)
        print("")
        for result in results {
            let perScreen = result.screens == 0 ? 0 : Double(result.calls) / Double(result.screens)
            var line = "  \(result.strategy): calls \(result.calls) over \(result.screens) screens = "
            line += "\(Report.format(perScreen, 3)) calls per screen; ads placed in breach of the separation rules "
            line += "\(result.separationBreaches); leases reclaimed \(result.leasesReclaimed); most ads held "
            line += "\(result.peakAdsHeld)"
            print(line)
            if let f = result.plan {
                var line = "    Plan calls \(f.planCalls) + shown Returns \(f.returnCalls); positions planned "
                line += "\(f.positionsPlanned), filled \(f.positionsFilled), rendered empty \(f.positionsEmpty), "
                line += "coming answers \(f.comingAnswers), separation holds \(f.holds); answers changed "
                line += "\(f.changedAnswers), coming while visible \(f.comingWhileVisible), replanned after a lost ad "
                line += "\(f.replanned) (service: \(f.guaranteesLost)), calls refused \(f.refused) "
                line += "(feeds refused \(f.feedsRefused))"
                print(line)
            }
        }
        let ratio = planResult.requestsPerImpression / borrowResult.requestsPerImpression
        var line = "\n  upstream requests per impression, Plan against per-cell Borrow: "
        line += "\(Report.format(planResult.requestsPerImpression, 4)) / "
        line += "\(Report.format(borrowResult.requestsPerImpression, 4)) = \(Report.format((ratio - 1) * 100, 2)) % "
        line += "(target: at most +5 %) \(ratio <= 1.05 ? "met" : "MISSED")"
        print(line)
    }

    /// One pool-economics scenario: the default configuration against fixed-size pools.
    static func runScenario(_ name: String, _ trace: Trace, _ options: Options) throws {
        var results: [StrategyResult] = []
        var caps: [Int] = []
        for cap in [options.cap] + options.moreCaps.map(Optional.some) {
            var capped = options
            capped.cap = cap
            var defaults = try runAdLoader(trace, capped, retained: nil)
            defaults.strategy = cap == nil ? "adloaderd defaults" : "adloaderd cap \(cap!)"
            results.append(defaults)
            caps.append(cap ?? LoaderConfiguration().maximumConcurrentRequests)
        }
        for cover in options.moreCovers {
            var covered = options
            covered.cover = cover
            var run = try runAdLoader(trace, covered, retained: nil)
            run.strategy = "adloaderd cover \(Report.format(cover, 0))s"
            results.append(run)
            caps.append(options.cap ?? LoaderConfiguration().maximumConcurrentRequests)
        }
        if options.memoryPeer {
            var peer = options
            peer.makesRoom = false
            var run = try runAdLoader(trace, peer, retained: nil)
            run.strategy = "adloaderd no room made"
            results.append(run)
            caps.append(options.cap ?? LoaderConfiguration().maximumConcurrentRequests)
        }
        var fixed = try runAdLoader(trace, options, retained: options.retained)
        fixed.strategy = "adloaderd fixed"
        results.append(fixed)
        caps.append(1_000_000)
        print(
            "\nscenario \(name): the default configuration (demand sizing) against fixed pools of \(options.retained)")
        Report.printTable(results)
        print("")
        for result in results {
            print(
                "  \(result.strategy): pools at the end \(result.poolsLeft), requests for a unit more than its idle "
                    + "time after its last borrow \(result.requestsAfterIdle), most requests in flight for one unit "
                    + "from the outage on \(options.outage == nil ? "-" : String(result.recoveryBurst)), "
                    + "leases reclaimed \(result.leasesReclaimed), highest in-flight target \(result.peakInFlightTarget), "
                    + "held back \(Report.format(result.heldBackSeconds, 1)) s, most ads held \(result.peakAdsHeld)"
                    + (options.maximumAds.map {
                        " (budget \($0), refused \(result.memoryRefused), dropped for memory \(result.memoryDropped))"
                    } ?? "")
                    + (result.outageHitRatio.map { ", hits over the outage \(Report.format($0 * 100, 2)) %" } ?? ""))
            if let outage = result.outage { print("    \(outage)") }
        }
        // The cap's arithmetic from this run's own numbers: what one pool can load per second
        // against the fresh ads its cells displayed (the fixed pools have no cap).
        let batch = 5.0
        let fill = options.source.fillRate
        print("\n  upstream and demand (first ad unit; fresh = new ads displayed, measured window):")
        for (result, cap) in zip(results, caps) {
            let ceiling =
                result.meanRoundTrip > 0 ? Double(cap) * result.adsPerRequest / result.meanRoundTrip * 1_000 : 0
            print(
                "  \(result.strategy): fresh ads/s \(Report.format(result.freshPerSecond, 1)) "
                    + "(busiest minute \(Report.format(result.peakFreshPerSecond, 1))), round trip "
                    + "\(Report.format(result.meanRoundTrip, 0)) ms, ads/request \(Report.format(result.adsPerRequest, 2)), "
                    + "requests in flight \(Report.format(result.meanRequestsInFlight, 2))"
                    + (cap < 1_000_000
                        ? " of \(cap), ceiling cap x ads/request / round trip = \(Report.format(ceiling, 1)) ads/s"
                        : ""))
        }
        if let unconstrained = results.last, unconstrained.meanRoundTrip > 0 {
            let needed = unconstrained.peakFreshPerSecond * unconstrained.meanRoundTrip / 1_000 / (batch * fill)
            print(
                "  cap needed for the busiest minute (fixed pools' demand): ceil(\(Report.format(unconstrained.peakFreshPerSecond, 1)) "
                    + "x \(Report.format(unconstrained.meanRoundTrip / 1_000, 3)) s / (\(Int(batch)) x \(fill))) = "
                    + "\(Int(needed.rounded(.up))) (\(Report.format(needed, 2))), before headroom")
        }
    }
}

let options = FeedScroll.parse(Array(CommandLine.arguments.dropFirst()))
let wallStart = ContinuousClock.now
let trace = Trace(options.trace)
let appearances = trace.events.lazy.filter { $0.kind == .appear }.count
let hours = Double(trace.endTime) / 3_600_000
print(
    """
    feed-scroll simulation (virtual time)\(options.smoke ? " [smoke]" : "")
      trace: seed \(options.trace.seed), \(trace.sessions) sessions over \(Report.format(options.trace.duration, 0)) s \
    (\(Report.format(hours, 2)) h until the last one ends), \(trace.cellsScrolled) cell moves, \
    \(appearances) ad-cell appearances, ad every \(options.trace.adEvery) cells, warm-up \(Report.format(options.warmupSeconds, 0)) s
      upstream: synthetic, latency \(options.source.latency.milliseconds)+0..\(options.source.latencyJitter.milliseconds) ms, \
    fill \(options.source.fillRate), errors \(options.source.errorRate); ad lifetime \(options.lifetime.milliseconds / 1_000) s; \
    borrow wait \(options.wait.milliseconds) ms
    """)

do {
    if options.plan {
        try FeedScroll.runPlanComparison(trace, options)
        print("\nwall time \(ContinuousClock.now - wallStart)")
        exit(0)
    }
    if let scenario = options.scenario {
        try FeedScroll.runScenario(scenario, trace, options)
        print("\nwall time \(ContinuousClock.now - wallStart)")
        exit(0)
    }
    var main: [StrategyResult] = []
    main.append(try FeedScroll.runBaseline("no-reuse", trace, options))
    main.append(try FeedScroll.runBaseline("reuse-no-prefetch", trace, options))
    main.append(try FeedScroll.runAdLoader(trace, options, retained: options.retained))
    let adloaderd = main.last!
    print("\nstrategies on the same trace (adloaderd with maximumRetainedAdvertisements \(options.retained)):")
    Report.printTable(main)

    var sweep: [StrategyResult] = []
    for retained in options.sweep {
        sweep.append(try FeedScroll.runAdLoader(trace, options, retained: retained))
    }
    if !sweep.isEmpty {
        print("\nadloaderd by maximumRetainedAdvertisements (same trace):")
        Report.printTable(sweep)
    }
    Report.printTargets(adloaderd)
    if let directory = options.outputDirectory {
        try Report.write(main: main, sweep: sweep, options: options, to: directory)
        print("\nwrote \(directory)/\(options.label).csv, \(directory)/\(options.label)-delays.dat")
    }
    print("\nwall time \(ContinuousClock.now - wallStart)")
} catch {
    FeedScroll.fail("\(error)")
}
