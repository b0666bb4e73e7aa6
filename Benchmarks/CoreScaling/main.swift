import AdLoaderArguments

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Scaling of the core: memory per ad, sweep pauses and borrow cost at 10k, 100k and 1M ads
/// in one pool. Each size runs in a child process (`--size N`) so its resident memory starts
/// from the same baseline; the parent prints the table and writes the CSV. See BENCHMARKS.md.
enum CoreScaling {
    static func fail(_ message: String) -> Never {
        let line = "CoreScalingBench: \(message)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        exit(2)
    }

    static func operations(for size: Int, smoke: Bool) -> Int {
        smoke ? 20_000 : 1_000_000
    }

    /// Runs `--size` in a child process and parses its RESULT line.
    static func runChild(size: Int, operations: Int, observer: Bool) -> ScalingRun.Result {
        var path = [CChar](repeating: 0, count: 4_096)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0 else { fail("cannot find my own executable") }
        let executable = String(decoding: path.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard
            let pipe = popen(
                "'\(executable)' --size \(size) --ops \(operations)\(observer ? "" : " --no-observer")", "r")
        else { fail("popen failed") }
        var line = [CChar](repeating: 0, count: 8_192)
        var result: ScalingRun.Result?
        while fgets(&line, Int32(line.count), pipe) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("RESULT,") {
                let values = text.dropFirst(7).trimmingSuffix().split(separator: ",").map(String.init)
                result = ScalingRun.Result(values: values)
            }
        }
        let status = pclose(pipe)
        guard status == 0, let result else { fail("the run for \(size) ads failed (status \(status))") }
        return result
    }

    static func printTable(_ results: [ScalingRun.Result]) {
        let header = [
            "ads", "content B/ad", "total B/ad", "beyond B/ad", "payload B/ad", "no-op sweep max us", "median us",
            "1% pause ms", "cpu ms", "(expired)", "(total ms", "callbacks)", "100% pause ms", "cpu ms", "(expired)",
            "(total ms", "callbacks)", "borrow+return ns", "+slot ns", "borrow+show+refill ns",
        ]
        let rows =
            [header]
            + results.map { r in
                [
                    String(r.size), fmt(r.contentBytesPerAd, 0), fmt(r.totalBytesPerAd, 0),
                    fmt(r.beyondContentBytesPerAd, 0),
                    fmt(r.contentPayloadBytesPerAd, 0), fmt(r.noopSweepMaxMicroseconds, 2),
                    fmt(r.noopSweepMedianMicroseconds, 2), fmt(r.onePercentSweepMilliseconds, 3),
                    fmt(r.onePercentSweepCPUMilliseconds, 3), String(r.onePercentExpired),
                    fmt(r.onePercentSweepTotalMilliseconds, 2), String(r.onePercentSweepCallbacks),
                    fmt(r.allSweepMilliseconds, 3), fmt(r.allSweepCPUMilliseconds, 3), String(r.allExpired),
                    fmt(r.allSweepTotalMilliseconds, 2),
                    String(r.allSweepCallbacks),
                    fmt(r.borrowReturnNanoseconds, 0), fmt(r.borrowReturnSlotNanoseconds, 0),
                    fmt(r.borrowShowRefillNanoseconds, 0),
                ]
            }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(
                row.indices.map { String(repeating: " ", count: widths[$0] - row[$0].count) + row[$0] }.joined(
                    separator: "  "))
        }
    }

    static func printTargets(_ results: [ScalingRun.Result]) {
        guard let largest = results.max(by: { $0.size < $1.size }) else { return }
        let memory = results.map(\.beyondContentBytesPerAd).max() ?? 0
        print(
            """

            targets:
              memory beyond content < 1536 B/ad (worst size): \(fmt(memory, 0)) B \(memory < 1_536 ? "met" : "MISSED")
              no-op sweep < 1 ms at \(largest.size) ads (longest of \(largest.noopSweeps)): \
            \(fmt(largest.noopSweepMaxMicroseconds, 2)) us \(largest.noopSweepMaxMicroseconds < 1_000 ? "met" : "MISSED")\
            \(largest.size < 1_000_000 ? " (target is stated at 1M ads; this run is smaller)" : "")
            """)
    }

    static func writeCSV(_ results: [ScalingRun.Result], to directory: String) {
        mkdir(directory, 0o755)
        let path = "\(directory)/corescaling.csv"
        guard let file = fopen(path, "w") else { fail("cannot write \(path)") }
        fputs(ScalingRun.Result.fields.joined(separator: ",") + "\n", file)
        for result in results { fputs(result.values.joined(separator: ",") + "\n", file) }
        fclose(file)
        print("\nwrote \(path)")
    }
}

extension Substring {
    func trimmingSuffix() -> Substring {
        var text = self
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
var sizes = [10_000, 100_000, 1_000_000]
var smoke = false
var childSize: Int?
var operationsOverride: Int?
var outputDirectory: String?
var observer = true
var scanner = ArgumentScanner(arguments)
do throws(ArgumentScanner.Failure) {
    while let argument = scanner.next() {
        switch argument {
        case .option("--smoke"):
            smoke = true
            sizes = [1_000, 5_000]
        case .option("--sizes"): sizes = try scanner.value().split(separator: ",").compactMap { Int($0) }
        case .option("--size"): childSize = try scanner.value(as: Int.self)
        case .option("--ops"): operationsOverride = try scanner.value(as: Int.self)
        case .option("--out"): outputDirectory = try scanner.value()
        case .option("--no-observer"): observer = false
        case .option("--help"), .option("-h"):
            print(
                "usage: CoreScalingBench [--smoke] [--sizes 10000,100000,1000000] [--ops N] [--no-observer] [--out DIR]"
            )
            exit(0)
        case .option(let name), .positional(let name): throw .unknown(name)
        }
    }
} catch {
    CoreScaling.fail("\(error) (try --help)")
}

if let size = childSize {
    do {
        var run = ScalingRun(
            size: size, operations: operationsOverride ?? CoreScaling.operations(for: size, smoke: false))
        run.observer = observer
        let result = try run.run()
        print("RESULT," + result.values.joined(separator: ","))
    } catch {
        CoreScaling.fail("\(error)")
    }
    exit(0)
}

#if DEBUG
    print("core scaling (DEBUG build: timings are not representative; use swift build -c release)")
#else
    print("core scaling (release build)")
#endif
print(
    "one pool, \(observer ? "one counting observer" : "no observer"), lifetime 3600 s, sweep every 60 s, 1% of ads expire at 90 s; sizes \(sizes.map(String.init).joined(separator: ", "))"
)
var results: [ScalingRun.Result] = []
for size in sizes {
    let operations = operationsOverride ?? CoreScaling.operations(for: size, smoke: smoke)
    results.append(CoreScaling.runChild(size: size, operations: operations, observer: observer))
}
CoreScaling.printTable(results)
CoreScaling.printTargets(results)
if let outputDirectory { CoreScaling.writeCSV(results, to: outputDirectory) }
