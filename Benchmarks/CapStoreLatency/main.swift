// Cap-store latency and the loop's longest pause.
//
//   CapStoreLatency [--count N] [--dir DIR] [--redis-port PORT] [--scenario NAME] [--seconds S]
//
// Without --scenario: the time one AppOpen read (counts) and one confirmed show
// (confirmShow) take in each store, called one after the other: memory and SQLite
// (synchronous FULL and NORMAL, a file in DIR) run on the calling thread, so that time is how
// long the loop waits; Redis (with --redis-port) runs on a libuv loop, asynchronously, and its
// time is the round trip from the call to its completion.
//
// With --scenario NAME (the Redis server's state, set up by Benchmarks/cap-store-latency.sh:
// normal, paused (CLIENT PAUSE: no replies), down (nothing listening)): for S seconds a timer
// issues 2 calls per millisecond to the asynchronous store while the loop is driven by
// UV_RUN_NOWAIT iterations, each timed: the longest iteration is the longest the loop was
// away from its sockets. The same run times the blocking hiredis API (redisCommand with the
// same 200 ms timeout, as the store worked before) at 50 calls/s as the peer.
// Prints p50, p99 and max in microseconds.
//
// --tls-ca FILE (and --tls-cert FILE --tls-key FILE for a client certificate): the asynchronous
// store speaks TLS to Redis (its TLS port); the blocking peer, which has no TLS, is not run.
import AdLoaderArguments
import AdLoaderCore
import AdLoaderTLS
import AdLoaderUV
import AdStores
import CHiredis
import Foundation

var count = 2_000
var directory = NSTemporaryDirectory() + "cap-store-latency-\(getpid())"
var redisPort: Int?
var scenario: String?
var seconds = 3.0
var tlsCA: String?
var tlsCertificate: String?
var tlsKey: String?
var scanner = ArgumentScanner(Array(CommandLine.arguments.dropFirst()))
while let argument = scanner.next() {
    switch argument {
    case .option("--count"): count = Int((try? scanner.value()) ?? "") ?? count
    case .option("--dir"): directory = (try? scanner.value()) ?? directory
    case .option("--redis-port"): redisPort = Int((try? scanner.value()) ?? "")
    case .option("--scenario"): scenario = try? scanner.value()
    case .option("--seconds"): seconds = Double((try? scanner.value()) ?? "") ?? seconds
    case .option("--tls-ca"): tlsCA = try? scanner.value()
    case .option("--tls-cert"): tlsCertificate = try? scanner.value()
    case .option("--tls-key"): tlsKey = try? scanner.value()
    default:
        print(
            "usage: CapStoreLatency [--count N] [--dir DIR] [--redis-port PORT] [--scenario NAME] [--seconds S]"
                + " [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]")
        exit(2)
    }
}
// As the daemon: a write to a connection Redis closed (killed in the down scenario) is an error, not a signal.
signal(SIGPIPE, SIG_IGN)
let tls: TLSClientContext? = try tlsCA.map {
    try TLSClientContext(TLSClientConfiguration(caFile: $0, certificateFile: tlsCertificate, keyFile: tlsKey))
}
try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

func nowMicroseconds() -> Double { Double(UVLoop.highResolutionNanoseconds) / 1e3 }

func microseconds(_ body: () -> Void) -> Double {
    let start = nowMicroseconds()
    body()
    return nowMicroseconds() - start
}

func report(_ name: String, _ samples: [Double], extra: String = "") {
    guard !samples.isEmpty else {
        print(name + ": no samples")
        return
    }
    let sorted = samples.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    let padded = name + String(repeating: " ", count: max(0, 46 - name.count))
    print(
        padded
            + String(
                format: "n=%7d  p50 %8.1f us  p99 %8.1f us  max %9.1f us", sorted.count, at(0.5), at(0.99),
                sorted.last ?? 0)
            + extra)
}

let start = AdInstant(unixMilliseconds: 1_796_119_200_000)
func key(_ i: Int) -> CapKey {
    CapKey(
        loader: "bench", deviceID: "device-\(i % 500)", sessionID: "session-\(i % 1_000)",
        day: LocalDay(at: start, utcOffsetSeconds: 0), utcOffsetSeconds: 0)
}

/// A store answering on the calling thread: the call's duration is the loop's wait.
func measureSynchronous(_ name: String, _ store: any CapStore, count: Int) {
    var reads: [Double] = []
    var confirms: [Double] = []
    var failures = 0
    for i in 0..<count {
        let now = start + .milliseconds(Int64(i))
        reads.append(
            microseconds {
                store.counts(for: key(i), at: now, sessionTimeout: .seconds(1800)) {
                    if case .failure = $0 { failures += 1 }
                }
            })
        confirms.append(
            microseconds {
                store.confirmShow(for: key(i), at: now, sessionTimeout: .seconds(1800)) {
                    if case .failure = $0 { failures += 1 }
                }
            })
    }
    store.close()
    report("\(name) counts", reads)
    report("\(name) confirmShow", confirms)
    if failures > 0 { print("\(name): \(failures) calls failed") }
}

/// The asynchronous Redis store, one call at a time: call to completion.
func measureRedisRoundTrips(port: Int, count: Int, tls: TLSClientContext?) throws {
    let redisLabel = tls == nil ? "redis" : "redis tls"
    let loop = try UVLoop()
    let store = RedisCapStore(loop: loop, host: "127.0.0.1", port: port, keyPrefix: "bench", tls: tls)
    var reads: [Double] = []
    var confirms: [Double] = []
    var failures = 0
    for i in 0..<count {
        let now = start + .milliseconds(Int64(i))
        for confirm in [false, true] {
            var done = false
            let began = nowMicroseconds()
            let completion: (Result<AppOpenCounts, CapStoreError>) -> Void = {
                done = true
                if case .failure = $0 { failures += 1 }
            }
            if confirm {
                store.confirmShow(for: key(i), at: now, sessionTimeout: .seconds(1800), completion: completion)
            } else {
                store.counts(for: key(i), at: now, sessionTimeout: .seconds(1800), completion: completion)
            }
            while !done { loop.runOnce() }
            let took = nowMicroseconds() - began
            if confirm { confirms.append(took) } else { reads.append(took) }
        }
    }
    store.close()
    _ = loop.runUntilIdle()
    try loop.close()
    report("\(redisLabel) counts (round trip)", reads)
    report("\(redisLabel) confirmShow (round trip)", confirms)
    if failures > 0 { print("\(redisLabel): \(failures) calls failed") }
}

/// The loop's iterations while a timer issues calls to the asynchronous store.
func measureLoopPauses(port: Int, scenario: String, seconds: Double, tls: TLSClientContext?) throws {
    let loop = try UVLoop()
    let store = RedisCapStore(
        loop: loop, host: "127.0.0.1", port: port, keyPrefix: "bench", timeout: .milliseconds(200),
        reconnectInterval: .seconds(1), tls: tls)
    let ticker = try UVTimer(loop: loop)
    var issued = 0
    var answered = 0
    var failed = 0
    var latencies: [Double] = []
    let wallStart = Date()
    ticker.start(timeout: 1, repeat: 1) {
        for _ in 0..<2 {
            let i = issued
            issued += 1
            let began = nowMicroseconds()
            // The store's clock: wall time since the start, as the daemon's loop clock would give.
            let now = start + .milliseconds(Int64(Date().timeIntervalSince(wallStart) * 1000))
            store.confirmShow(for: key(i), at: now, sessionTimeout: .seconds(1800)) { result in
                answered += 1
                if case .failure = result { failed += 1 }
                latencies.append(nowMicroseconds() - began)
            }
        }
    }
    var iterations: [Double] = []
    var own: [Double] = []
    iterations.reserveCapacity(1_000_000)
    own.reserveCapacity(1_000_000)
    let end = nowMicroseconds() + seconds * 1e6
    while nowMicroseconds() < end {
        let waitedBefore = runQueueWaitMicroseconds()
        let began = nowMicroseconds()
        loop.runNoWait()
        let took = nowMicroseconds() - began
        iterations.append(took)
        // Minus the time the kernel kept this thread off a CPU (other processes' turn): what
        // is left is the loop's own work and any wait it chose (a blocking call).
        own.append(max(0, took - (runQueueWaitMicroseconds() - waitedBefore)))
    }
    let failedBeforeClose = failed
    ticker.close()
    store.close()
    _ = loop.runUntilIdle()
    try loop.close()
    let name = tls == nil ? "async store" : "async store, tls"
    report("\(name), \(scenario): loop iteration (wall)", iterations)
    report("\(name), \(scenario): loop iteration (own)", own)
    report(
        "\(name), \(scenario): call", latencies,
        extra: String(format: "  issued %d, answered %d, failed %d", issued, answered, failedBeforeClose))
    // hiredis' blocking API has no TLS: the peer runs on plaintext only.
    if tls == nil { try measureBlockingPeer(port: port, scenario: scenario, seconds: min(seconds, 2)) }
}

/// This thread's time spent runnable but waiting for a CPU (`/proc/thread-self/schedstat`,
/// second field, nanoseconds), in microseconds; 0 when unreadable.
let schedstat = open("/proc/thread-self/schedstat", O_RDONLY)
func runQueueWaitMicroseconds() -> Double {
    var buffer = [UInt8](repeating: 0, count: 96)
    let n = buffer.withUnsafeMutableBytes { pread(schedstat, $0.baseAddress, 95, 0) }
    guard n > 0 else { return 0 }
    let fields = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: " ")
    guard fields.count >= 2, let waited = Double(fields[1]) else { return 0 }
    return waited / 1e3
}

/// The peer: hiredis' blocking API with a 200 ms timeout (how the store ran before), one
/// call every 20 ms; each call's duration is a pause of the loop it would run on.
func measureBlockingPeer(port: Int, scenario: String, seconds: Double) throws {
    var pauses: [Double] = []
    var failures = 0
    let tv = timeval(tv_sec: 0, tv_usec: 200_000)
    var context: UnsafeMutablePointer<redisContext>?
    let end = nowMicroseconds() + seconds * 1e6
    var i = 0
    while nowMicroseconds() < end {
        let waitedBefore = runQueueWaitMicroseconds()
        let began = nowMicroseconds()
        if context == nil {
            context = redisConnectWithTimeout("127.0.0.1", Int32(port), tv)
            if let c = context, c.pointee.err != 0 {
                redisFree(c)
                context = nil
            } else if let c = context {
                redisSetTimeout(c, tv)
            }
        }
        if let c = context {
            let arguments = ["INCR", "bench:{device-\(i % 500)}:peer"]
            let cStrings = arguments.map { strdup($0) }
            defer { cStrings.forEach { free($0) } }
            var argv: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
            let lengths = arguments.map { $0.utf8.count }
            let reply = redisCommandArgv(c, Int32(arguments.count), &argv, lengths)
            if reply == nil {
                failures += 1
                redisFree(c)
                context = nil
            } else {
                freeReplyObject(reply)
            }
        } else {
            failures += 1
        }
        pauses.append(nowMicroseconds() - began - (runQueueWaitMicroseconds() - waitedBefore))
        i += 1
        usleep(20_000)
    }
    if let context { redisFree(context) }
    report("blocking hiredis, \(scenario): call (own)", pauses, extra: "  failed \(failures)")
}

do {
    if let scenario, let redisPort {
        try measureLoopPauses(port: redisPort, scenario: scenario, seconds: seconds, tls: tls)
    } else {
        measureSynchronous("memory", InMemoryCapStore(), count: count)
        for synchronous in SQLiteCapStore.Synchronous.allCases {
            let path = "\(directory)/caps-\(synchronous.rawValue).sqlite"
            measureSynchronous(
                "sqlite \(synchronous.rawValue)", try SQLiteCapStore(path: path, synchronous: synchronous), count: count
            )
        }
        if let redisPort { try measureRedisRoundTrips(port: redisPort, count: count, tls: tls) }
    }
} catch {
    print("error: \(error)")
    exit(1)
}
try? FileManager.default.removeItem(atPath: directory)
