// Cap-store latency: the time one AppOpen read (counts) and one confirmed show (confirmShow)
// take in each store, as the event loop would wait for them (they run on the loop thread).
//
//   CapStoreLatency [--count N] [--dir DIR] [--redis-port PORT]
//
// SQLite runs on a file in DIR (default: a temporary directory) with synchronous FULL and
// NORMAL; Redis runs against a redis-server on 127.0.0.1:PORT when --redis-port is given
// (Benchmarks/cap-store-latency.sh starts one). Prints one line per store and operation:
// p50, p99, max in microseconds.
import AdLoaderArguments
import AdLoaderCore
import AdStores
import Foundation

var count = 2_000
var directory = NSTemporaryDirectory() + "cap-store-latency-\(getpid())"
var redisPort: Int?
var scanner = ArgumentScanner(Array(CommandLine.arguments.dropFirst()))
while let argument = scanner.next() {
    switch argument {
    case .option("--count"): count = Int((try? scanner.value()) ?? "") ?? count
    case .option("--dir"): directory = (try? scanner.value()) ?? directory
    case .option("--redis-port"): redisPort = Int((try? scanner.value()) ?? "")
    default:
        print("usage: CapStoreLatency [--count N] [--dir DIR] [--redis-port PORT]")
        exit(2)
    }
}
try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

func microseconds(_ body: () -> Void) -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    body()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return Double(end.tv_sec - start.tv_sec) * 1e6 + Double(end.tv_nsec - start.tv_nsec) / 1e3
}

func report(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    let padded = name + String(repeating: " ", count: max(0, 26 - name.count))
    print(padded + String(format: "n=%d  p50 %8.1f us  p99 %8.1f us  max %8.1f us", sorted.count, at(0.5), at(0.99), sorted.last ?? 0))
}

func measure(_ name: String, _ store: any CapStore, count: Int) {
    let start = AdInstant(unixMilliseconds: 1_796_119_200_000)
    var reads: [Double] = []
    var confirms: [Double] = []
    var failures = 0
    for i in 0..<count {
        let key = CapKey(
            loader: "bench", deviceID: "device-\(i % 500)", sessionID: "session-\(i % 1_000)",
            day: LocalDay(at: start, utcOffsetSeconds: 0), utcOffsetSeconds: 0)
        let now = start + .milliseconds(Int64(i))
        reads.append(microseconds {
            store.counts(for: key, at: now, sessionTimeout: .seconds(1800)) { if case .failure = $0 { failures += 1 } }
        })
        confirms.append(microseconds {
            store.confirmShow(for: key, at: now, sessionTimeout: .seconds(1800)) { if case .failure = $0 { failures += 1 } }
        })
    }
    store.close()
    report("\(name) counts", reads)
    report("\(name) confirmShow", confirms)
    if failures > 0 { print("\(name): \(failures) calls failed") }
}

do {
    measure("memory", InMemoryCapStore(), count: count)
    for synchronous in SQLiteCapStore.Synchronous.allCases {
        let path = "\(directory)/caps-\(synchronous.rawValue).sqlite"
        measure("sqlite \(synchronous.rawValue)", try SQLiteCapStore(path: path, synchronous: synchronous), count: count)
    }
    if let redisPort { measure("redis", RedisCapStore(host: "127.0.0.1", port: redisPort, keyPrefix: "bench"), count: count) }
} catch {
    print("error: \(error)")
    exit(1)
}
try? FileManager.default.removeItem(atPath: directory)
