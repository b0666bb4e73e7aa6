// SoakBench: the real adloaderd under mixed load for minutes or hours, sampling RSS, open
// descriptors and Stats latency, and checking that memory stays flat, descriptors do not leak
// and every ad is accounted for. `make soak` runs it; a one-minute run is part of `make test`.
// See RELIABILITY.md.
import AdLoaderClient
import AdLoaderCore
import Foundation

/// Prints a line at once (stdout may be a file: the log of a long run is read while it runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    exit(error.status)
}

let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let outDirectory = URL(fileURLWithPath: options.out)
try FileManager.default.createDirectory(at: outDirectory, withIntermediateDirectories: true)
let daemonPath = options.daemonPath.isEmpty ? here.appendingPathComponent("adloaderd").path : options.daemonPath
let adminPort = AdminRequest.freePort()
let daemon = try DaemonUnderTest(
    binary: daemonPath, configuration: options.configurationJSON(adminPort: adminPort), directory: outDirectory,
    label: options.label, compactionSize: options.compactionSize)
let endpoint = Endpoint.tcp(host: "127.0.0.1", port: daemon.port)
let startDescriptors = daemon.openDescriptors() ?? 0
say(
    "soak \(options.label): adloaderd pid \(daemon.pid) on port \(daemon.port), \(options.minutes) min, "
        + "lifetime \(options.lifetime), lease timeout \(options.leaseTimeout), pressure \(options.pressureConnections)x\(options.pressureDepth)"
)

var failures: [String] = []
/// Pipelined Borrow + Return from ProtocolLoadBench (at most 300 s a run: restarted as needed).
func startPressure() throws -> Process? {
    guard options.pressureConnections > 0 else { return nil }
    let process = Process()
    process.executableURL = here.appendingPathComponent("ProtocolLoadBench")
    process.arguments =
        [
            "--port", "\(daemon.port)", "--connections", "\(options.pressureConnections)", "--depth",
            "\(options.pressureDepth)",
            "--duration", "\(min(300, options.minutes * 60))", "--warmup", "0", "--quiet", "--ad-unit", "pressure",
        ] + (options.pressureRate > 0 ? ["--rate", "\(options.pressureRate)"] : [])
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    return process
}
var pressure = try startPressure()

/// gRPC Borrow calls over HTTP/2 from h2load (when installed), with a slot, so each answer is the
/// same lease (REUSED): 2 connections x 4 streams at 200 calls/s each; restarted like the pressure.
let h2load = ["/usr/bin/h2load", "/usr/local/bin/h2load"].first { FileManager.default.isExecutableFile(atPath: $0) }
let grpcBody = outDirectory.appendingPathComponent("soak-\(options.label)-borrow.grpc")
// BorrowRequest { ad_unit_id: "grpc-feed" (1), slot_key: "cell-1" (3) } behind the 5-byte gRPC prefix.
try Data([0, 0, 0, 0, 19, 0x0a, 9] + Array("grpc-feed".utf8) + [0x1a, 6] + Array("cell-1".utf8)).write(to: grpcBody)
func startGRPC() throws -> Process? {
    guard let h2load else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: h2load)
    process.arguments = [
        "-c", "2", "-m", "4", "--rps", "100", "-D", "\(Int(min(300, options.minutes * 60)))",
        "-H", "content-type: application/grpc", "-H", "te: trailers", "-d", grpcBody.path,
        "http://127.0.0.1:\(daemon.port)/adloader.v1.NativeAdLoader/Borrow",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}
var grpc = try startGRPC()
if grpc == nil { say("h2load not installed: no gRPC calls in this soak (apt-get install nghttp2-client)") }

let tally = Tally()
let workers = Workload(endpoint: endpoint, adminPort: adminPort, tally: tally).start()
let probe = try AdLoaderClient.connect(to: endpoint)

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Checks loaded = available + leased + consumed + expired + removed for every pool.
func unaccounted(_ pools: [PoolStats]) -> [String] {
    pools.compactMap { p in
        let held = UInt64(p.available + p.leased) + p.consumed + p.expired + p.removed
        return held == p.loaded
            ? nil
            : "\(p.loader)/\(p.adUnitID): loaded \(p.loaded) != available \(p.available) + leased \(p.leased) + consumed \(p.consumed) + expired \(p.expired) + removed \(p.removed)"
    }
}

var samples: [Sample] = []
let clock = ContinuousClock()
let start = clock.now
let total = Duration.milliseconds(Int(options.minutes * 60_000))
var next = start
let csv = outDirectory.appendingPathComponent("soak-\(options.label).csv")
var rows = "seconds,rss_kib,fds,stats_ms,calls\n"
while clock.now - start < total {
    next = next + .milliseconds(Int(options.sampleSeconds * 1_000))
    // The ProtocolLoadBench pressure lasts at most 300 s: restart it for longer runs.
    if let process = pressure, !process.isRunning, clock.now - start < total - .seconds(10) {
        // ProtocolLoadBench stops at the first refused call (e.g. NOT_FOUND for a lease whose
        // ad expired under it): counted, and the pressure restarts.
        tally.add("pressure.runs")
        if process.terminationStatus != 0 { tally.add("pressure.stoppedEarly") }
        pressure = try startPressure()
    }
    if let process = grpc, !process.isRunning, clock.now - start < total - .seconds(10) {
        tally.add(process.terminationStatus == 0 ? "grpc.runs" : "grpc.failedRuns")
        grpc = try startGRPC()
    }
    try await Task.sleep(until: next, clock: clock)
    guard daemon.isRunning else {
        failures.append("the daemon exited during the run (log: \(daemon.logURL.path))")
        break
    }
    let asked = clock.now
    let pools: [PoolStats]
    do {
        pools = try await probe.stats(timeout: .seconds(10))
    } catch {
        failures.append("Stats failed: \(error)")
        break
    }
    let statsTime = clock.now - asked
    for problem in unaccounted(pools) where failures.count < 20 { failures.append("accounting: \(problem)") }
    let sample = Sample(
        seconds: seconds(clock.now - start),
        residentKiB: daemon.residentKiB() ?? 0, descriptors: daemon.openDescriptors() ?? 0,
        statsMilliseconds: seconds(statsTime) * 1e3,
        calls: tally.calls)
    samples.append(sample)
    rows +=
        "\(Int(sample.seconds)),\(sample.residentKiB),\(sample.descriptors),\(String(format: "%.2f", sample.statsMilliseconds)),\(sample.calls)\n"
    try rows.write(to: csv, atomically: true, encoding: .utf8)
    say(
        String(
            format: "%6.0f s  rss %7d KiB  fds %4d  stats %7.2f ms  calls %d",
            sample.seconds, sample.residentKiB, sample.descriptors, sample.statsMilliseconds, sample.calls))
}

for worker in workers { worker.cancel() }
for worker in workers { await worker.value }
for case let process? in [pressure, grpc] where process.isRunning {
    process.terminate()
    process.waitUntilExit()
}
if daemon.isRunning, let pools = try? await probe.stats(timeout: .seconds(10)) {
    for problem in unaccounted(pools) { failures.append("accounting at the end: \(problem)") }
    if h2load != nil {
        if let pool = pools.first(where: { $0.adUnitID == "grpc-feed" }), pool.borrowHits + pool.borrowMisses > 0 {
            tally.add("grpc.borrows", Int(pool.borrowHits + pool.borrowMisses))
        } else {
            failures.append("gRPC: h2load's Borrow calls never reached the pool grpc-feed")
        }
    }
}
probe.close()

// Descriptors: every client is gone, so the daemon should be back to its listeners and loop.
var endDescriptors = daemon.openDescriptors() ?? 0
let settleDeadline = clock.now + .seconds(10)
while endDescriptors > startDescriptors && clock.now < settleDeadline {
    try await Task.sleep(for: .milliseconds(50))
    endDescriptors = daemon.openDescriptors() ?? 0
}
if endDescriptors > startDescriptors {
    failures.append("descriptors: \(endDescriptors) open after every client closed, \(startDescriptors) at start")
}

let judged = Verdict.judged(samples, warmupFraction: options.warmupFraction)
let growth = Verdict.growthKiB(over: judged)
if judged.count < 3 {
    failures.append("too few samples to judge memory (\(samples.count)); lengthen --minutes or shorten --sample")
} else if growth > options.maxGrowthKiB {
    failures.append(
        String(
            format: "memory: RSS grew %.0f KiB over the last %.0f s (trend), more than %.0f KiB",
            growth, judged.last!.seconds - judged.first!.seconds, options.maxGrowthKiB))
}
let (counts, unexpected) = tally.snapshot
for problem in unexpected { failures.append("unexpected: \(problem)") }
let exitStatus = daemon.stop()
if exitStatus != 0 {
    failures.append("the daemon's exit on SIGTERM: \(exitStatus.map(String.init) ?? "killed after 15 s")")
}

let rss = samples.map(\.residentKiB)
let lag = samples.map(\.statsMilliseconds).sorted()
let summary: [String: Any] = [
    "bench": "soak", "label": options.label, "minutes": options.minutes, "samples": samples.count,
    "rss_kib_first": rss.first ?? 0, "rss_kib_after_warmup": judged.first?.residentKiB ?? 0,
    "rss_kib_last": rss.last ?? 0,
    "rss_kib_max": rss.max() ?? 0, "rss_growth_last_half_kib": Int(growth),
    "fds_start": startDescriptors, "fds_end": endDescriptors, "fds_max": samples.map(\.descriptors).max() ?? 0,
    "stats_ms_p50": lag.isEmpty ? 0 : lag[lag.count / 2], "stats_ms_max": lag.last ?? 0,
    "calls": tally.calls, "counts": counts, "passed": failures.isEmpty, "failures": failures,
]
let json = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
try json.write(to: outDirectory.appendingPathComponent("soak-\(options.label).json"))
say(String(decoding: json, as: UTF8.self))
if failures.isEmpty {
    say("soak \(options.label): PASS")
} else {
    for failure in failures { say("FAIL: \(failure)") }
    say("soak \(options.label): FAIL (\(failures.count))")
}
exit(failures.isEmpty ? 0 : 1)
