import AdLoaderArguments

/// What `SoakBench` was asked to do.
struct Options {
    var daemonPath = ""
    var minutes = 1.0
    var sampleSeconds = 2.0
    /// Samples before this are warm-up (pools filling, buffers growing to their working size).
    var warmupFraction = 1.0 / 3.0
    var lifetime = "5s"
    var leaseTimeout = "2s"
    var sweepInterval = "1s"
    /// Connections of pipelined Borrow + Return pressure (ProtocolLoadBench beside this binary); 0: none.
    var pressureConnections = 0
    var pressureDepth = 4
    /// Open-loop rate of the pressure (calls/s, all its connections); 0: as fast as answered.
    var pressureRate = 0.0
    /// Fail when RSS grew more than this over the last half of the samples after warm-up (KiB).
    var maxGrowthKiB = 2_048.0
    /// The daemon's `--pool-store-journal-compaction-size`.
    var compactionSize = "8MiB"
    var out = "bench-results"
    var label = "soak"

    static let usage = """
        Usage: SoakBench [options]
          --daemon PATH        adloaderd binary (default: the one beside this binary)
          --minutes M          length of the run, 0.2...1440 (default 1)
          --sample S           seconds between samples of RSS, fds and Stats latency (default 2)
          --lifetime D         ad lifetime of the loaders (default 5s; issue 15's run: 30s)
          --lease-timeout D    lease timeout (default 2s; issue 15's run: 5s)
          --sweep D            sweep interval (default 1s; issue 15's run: 2s)
          --pressure N         also N connections of pipelined Borrow+Return (ProtocolLoadBench
                               beside this binary, depth --depth); 0 for none (default)
          --depth D            calls in flight per pressure connection (default 4)
          --pressure-rate R    pressure calls/s over all its connections (default: closed loop)
          --max-growth-kib K   fail when RSS grows more than K KiB over the last half of the run
                               after warm-up (default 2048)
          --compaction-size S  the daemon's pool journal compaction size (default 8MiB: many
                               compactions per run; the product's default is 64MiB)
          --out DIR            where soak-LABEL.csv and soak-LABEL.json go (default bench-results)
          --label NAME         names the files and the JSON line (default soak)
        The daemon runs with a synthetic source (5 ms latency, fill 0.9, 5 % errors) under mixed
        calls: Borrow with and without slots, shown, unshown and abandoned leases (reclaimed by
        the timeout), parked borrows answered and timed out, Watch streams, Stats, connections
        opening and closing, and garbage connections. Checks: RSS flat after warm-up, descriptors
        back to their start, every ad accounted for in every sample, no unexpected errors.
        Exit status: 0 pass, 1 a check failed, 2 bad options.
        """

    static func parse(_ arguments: [String]) throws(SoakFailure) -> Options {
        var o = Options()
        var scanner = ArgumentScanner(arguments)
        var help = false
        do throws(ArgumentScanner.Failure) {
            scan: while let argument = scanner.next() {
                switch argument {
                case .option("--daemon"): o.daemonPath = try scanner.value()
                case .option("--minutes"): o.minutes = try scanner.value(in: 0.2...1_440)
                case .option("--sample"): o.sampleSeconds = try scanner.value(in: 0.2...600)
                case .option("--lifetime"): o.lifetime = try scanner.value()
                case .option("--lease-timeout"): o.leaseTimeout = try scanner.value()
                case .option("--sweep"): o.sweepInterval = try scanner.value()
                case .option("--pressure"): o.pressureConnections = Int(try scanner.value(in: 0...256.0))
                case .option("--depth"): o.pressureDepth = Int(try scanner.value(in: 1...128.0))
                case .option("--pressure-rate"): o.pressureRate = try scanner.value(in: 0...10_000_000.0)
                case .option("--max-growth-kib"): o.maxGrowthKiB = try scanner.value(in: 0...1e9)
                case .option("--compaction-size"): o.compactionSize = try scanner.value()
                case .option("--out"): o.out = try scanner.value()
                case .option("--label"): o.label = try scanner.value()
                case .option("--help"), .option("-h"):
                    help = true
                    break scan
                case .option(let name), .positional(let name): throw .unknown(name)
                }
            }
        } catch {
            throw SoakFailure(error.description, status: 2)
        }
        if help { throw SoakFailure(usage, status: 0) }
        return o
    }

    /// The daemon's configuration: the loader, a small pool that parks borrows and is
    /// answered when ads arrive, and a loader whose source never fills (parked borrows time out).
    func configurationJSON(adminPort: Int) -> String {
        """
        { "limits": { "idleTimeout": "20s" },
          "admin": { "port": \(adminPort) },
          "sources": { "synthetic": { "latency": "5ms", "fillRate": 0.9, "errorRate": 0.05, "seed": 15 },
                       "never": { "type": "synthetic", "fillRate": 0 } },
          "loaders": {
            "default": { "maximumRetainedAdvertisements": 2000, "lifetime": "\(lifetime)",
                         "sweepInterval": "\(sweepInterval)", "leaseTimeout": "\(leaseTimeout)",
                         "retry": { "delay": "100ms" } },
            "small": { "maximumRetainedAdvertisements": 6, "numberOfAdvertisements": 3, "lifetime": "\(lifetime)",
                       "sweepInterval": "\(sweepInterval)", "leaseTimeout": "\(leaseTimeout)", "showCountThreshold": 2,
                       "retry": { "delay": "100ms" } },
            "parking": { "source": "never", "maximumRetainedAdvertisements": 5, "retry": { "delay": "1s" } } } }
        """
    }
}

/// A reason to stop, with the exit status.
struct SoakFailure: Error, CustomStringConvertible {
    var description: String
    var status: Int32
    init(_ description: String, status: Int32 = 1) {
        self.description = description
        self.status = status
    }
}
