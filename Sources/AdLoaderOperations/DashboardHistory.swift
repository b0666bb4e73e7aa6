import AdLoaderCore
import AdLoaderLogging
import AdLoaderMetrics
import AdLoaderService
import AdLoaderWire

/// The dashboard's memory: a sample of the pools and the server every
/// ``ServerConfiguration/Admin/sampleInterval``, the last hour of them (at most 720), served
/// as JSON to the page at `/`.
///
/// Rates and ratios are over the interval between two samples: calls per second, p99 latency
/// of the unary calls, borrow hit ratio, upstream requests per impression (requests sent / ads
/// shown), ads wasted (expired unconsumed), the loop lag's p99 and maximum; for triage, calls
/// per second by status code, upstream failures per second by class (all sources) and leases
/// reclaimed by the lease timeout (the leak signal). The JSON also names the replica: instance,
/// version, start time and uptime.
///
/// - Important: loop-confined.
package final class DashboardHistory {
    /// Pools drawn on the dashboard, first come (the metrics have more).
    package static let maxPools = 12

    package struct PoolPoint {
        var available: Int
        var leased: Int
        var inFlight: Int
        var target: Int
    }

    package struct Sample {
        var unixMilliseconds: Int64
        var pools: [DaemonMetrics.PoolKey: PoolPoint]
        var callsPerSecond: Double
        var p99Milliseconds: Double?
        var hitRatio: Double?
        var upstreamPerImpression: Double?
        var wasted: UInt64
        var lagP99Milliseconds: Double?
        var lagMaxMilliseconds: Double
        /// Calls per second by `Status.Code.rawValue`.
        var callsByCode: [Double]
        /// Upstream failures per second by class (``MeasuredDemandSource/failureClasses`` order).
        var failuresPerSecond: [Double]
        var reclaimed: UInt64
    }

    private struct Totals {
        var calls: UInt64 = 0
        var latency: HistogramSnapshot?
        var lag: HistogramSnapshot?
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        var upstream: UInt64 = 0
        var shown: UInt64 = 0
        var expired: UInt64 = 0
        var byCode: [UInt64] = []
        var failures: [UInt64] = [0, 0, 0]
        var reclaimed: UInt64 = 0
    }

    private let metrics: DaemonMetrics
    /// The settings an on-call engineer checks first, as the composition root names them; replaced
    /// by a configuration reload (the page shows the loaders as they are).
    package var configurationRows: [(String, String)]
    private let sampleInterval: Duration
    private let capacity: Int
    package private(set) var samples: [Sample] = []
    package private(set) var poolKeys: [DaemonMetrics.PoolKey] = []
    /// The bound addresses, shown with the configuration (set by the daemon once bound).
    package var listening: [String] = []
    /// The replica's name (``AdLoaderService/instanceName``), set by the daemon once bound.
    package var instance = ""
    /// The build's version, as the composition root names it (``Daemon/version``).
    package var version = BuildInfo.version
    private var previous: Totals?
    private var previousMilliseconds: Int64 = 0

    package init(metrics: DaemonMetrics, sampleInterval: Duration, configurationRows: [(String, String)]) {
        self.metrics = metrics
        self.sampleInterval = sampleInterval
        self.configurationRows = configurationRows
        let interval = max(sampleInterval.milliseconds, 1)
        capacity = Int(min(720, max(2, 3_600_000 / interval)))
    }

    /// Takes one sample at `unixMilliseconds` (the first one only records the totals).
    package func sample(unixMilliseconds: Int64) {
        let pools = metrics.poolStats()
        var totals = Totals()
        totals.calls = metrics.calls.total
        totals.latency = metrics.calls.unaryLatency
        totals.lag = metrics.loopLag.snapshot
        totals.byCode = metrics.calls.totalsByCode
        for stats in pools {
            totals.hits += stats.borrowHits
            totals.misses += stats.borrowMisses
            totals.upstream += stats.upstreamRequests
            totals.expired += stats.expired
            totals.reclaimed += stats.leasesReclaimed
        }
        for source in metrics.sources {
            for index in totals.failures.indices { totals.failures[index] += source.failures[index] }
        }
        totals.shown = metrics.sources.reduce(0) { $0 + $1.notices[0] }
        defer {
            previous = totals
            previousMilliseconds = unixMilliseconds
            metrics.maxLagSinceSample = 0
        }
        guard let before = previous else { return }
        let seconds = max(Double(unixMilliseconds - previousMilliseconds) / 1000, 0.001)
        var points: [DaemonMetrics.PoolKey: PoolPoint] = [:]
        for stats in pools {
            let key = DaemonMetrics.PoolKey(loader: stats.loader, adUnitID: stats.adUnitID)
            if !poolKeys.contains(key) {
                guard poolKeys.count < Self.maxPools else { continue }
                poolKeys.append(key)
            }
            points[key] = PoolPoint(
                available: stats.available, leased: stats.leased, inFlight: stats.inFlight,
                target: stats.target)
        }
        let borrows = (totals.hits &- before.hits) + (totals.misses &- before.misses)
        let shown = totals.shown &- before.shown
        let latency = totals.latency.flatMap { now in before.latency.map { now.subtracting($0) } }
        let lag = totals.lag.flatMap { now in before.lag.map { now.subtracting($0) } }
        samples.append(
            Sample(
                unixMilliseconds: unixMilliseconds, pools: points,
                callsPerSecond: Double(totals.calls &- before.calls) / seconds,
                p99Milliseconds: latency?.quantile(0.99).map { $0 * 1000 },
                hitRatio: borrows > 0 ? Double(totals.hits &- before.hits) / Double(borrows) : nil,
                upstreamPerImpression: shown > 0 ? Double(totals.upstream &- before.upstream) / Double(shown) : nil,
                wasted: totals.expired &- before.expired,
                // Interpolating inside a bucket can overshoot the largest lag seen: cap it there.
                lagP99Milliseconds: lag?.quantile(0.99).map { min($0, metrics.maxLagSinceSample) * 1000 },
                lagMaxMilliseconds: metrics.maxLagSinceSample * 1000,
                callsByCode: zip(totals.byCode, before.byCode).map { Double($0 &- $1) / seconds },
                failuresPerSecond: zip(totals.failures, before.failures).map { Double($0 &- $1) / seconds },
                reclaimed: totals.reclaimed &- before.reclaimed))
        if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
    }

    /// The page's data: identity, readiness, configuration, totals and the sampled series.
    /// - Parameter unixMilliseconds: now, for the uptime.
    package func json(ready: (ready: Bool, reasons: [String]), unixMilliseconds: Int64) -> String {
        var out = "{"
        out += "\"instance\":\(JSONWriter.quoted(instance)),\"version\":\(JSONWriter.quoted(version))"
        let started = Int64(metrics.startedAtUnixSeconds * 1000)
        out += ",\"startedAtMs\":\(started),\"uptimeSeconds\":\(max(0, unixMilliseconds - started) / 1000)"
        out +=
            ",\"ready\":\(ready.ready),\"reasons\":[" + ready.reasons.map(JSONWriter.quoted).joined(separator: ",")
            + "]"
        out += ",\"sampleIntervalMs\":\(sampleInterval.milliseconds)"
        out +=
            ",\"configuration\":["
            + shownRows().map { "[\(JSONWriter.quoted($0.0)),\(JSONWriter.quoted($0.1))]" }
            .joined(separator: ",") + "]"
        out += ",\"t\":[" + samples.map { String($0.unixMilliseconds) }.joined(separator: ",") + "]"
        func series(_ name: String, _ value: (Sample) -> Double?) {
            out += ",\"\(name)\":[" + samples.map { number(value($0)) }.joined(separator: ",") + "]"
        }
        series("callsPerSecond") { $0.callsPerSecond }
        series("p99Ms") { $0.p99Milliseconds }
        series("hitRatio") { $0.hitRatio }
        series("upstreamPerImpression") { $0.upstreamPerImpression }
        series("wasted") { Double($0.wasted) }
        series("lagP99Ms") { $0.lagP99Milliseconds }
        series("lagMaxMs") { $0.lagMaxMilliseconds }
        series("reclaimed") { Double($0.reclaimed) }
        // OK always; another code once it happened in the window.
        out +=
            ",\"codes\":{"
            + Status.Code.all.filter { code in
                code == .ok || samples.contains { $0.callsByCode[code.rawValue] > 0 }
            }.map { code in
                JSONWriter.quoted(code.description) + ":["
                    + samples.map { number($0.callsByCode[code.rawValue]) }.joined(separator: ",") + "]"
            }.joined(separator: ",") + "}"
        out +=
            ",\"failures\":{"
            + MeasuredDemandSource.failureClasses.enumerated().map { index, code in
                JSONWriter.quoted(code.description) + ":["
                    + samples.map { number($0.failuresPerSecond[index]) }.joined(separator: ",") + "]"
            }.joined(separator: ",") + "}"
        out += ",\"pools\":["
        out += poolKeys.map { key in
            var pool = "{\"loader\":\(JSONWriter.quoted(key.loader)),\"adUnit\":\(JSONWriter.quoted(key.adUnitID))"
            for (name, value) in [
                ("available", { (p: PoolPoint) in p.available }), ("leased", { $0.leased }),
                ("inFlight", { $0.inFlight }),
                ("target", { $0.target }),
            ] as [(String, (PoolPoint) -> Int)] {
                pool +=
                    ",\"\(name)\":["
                    + samples.map { sample in
                        sample.pools[key].map { String(value($0)) } ?? "null"
                    }.joined(separator: ",") + "]"
            }
            return pool + "}"
        }.joined(separator: ",")
        out += "]}"
        return out
    }

    private func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return ExpositionFormat.format((value * 1000).rounded() / 1000)
    }

    /// The listening addresses, then the configuration's rows.
    private func shownRows() -> [(String, String)] {
        [("listening", listening.joined(separator: " and "))] + configurationRows
    }
}
