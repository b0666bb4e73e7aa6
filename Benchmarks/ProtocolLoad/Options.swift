import AdLoaderArguments

/// Command-line options of ProtocolLoadBench; every value is bounded.
struct Options {
    var port: UInt16 = 7411
    var connections = 32
    var depth = 1
    var durationSeconds = 5.0
    var warmupSeconds = 1.0
    /// Open-loop calls per second over all connections; 0 = closed loop.
    var rate = 0.0
    /// Stop measuring after this many calls (0 = only the duration bounds the run).
    var maxCalls: UInt64 = 0
    /// Closed loop: send `depth` calls, wait for all their answers, send the next `depth`
    /// (redis-benchmark's -P); false refills each slot as soon as its answer arrives.
    var batch = false
    var adUnitID = "bench-feed"
    /// Return every lease shown (consumed at the loader's show count, so the pool refills
    /// from upstream); default: unshown, back in the pool.
    var shown = false
    var label = ""
    var quiet = false
    /// The daemon's process id: its CPU time over the measured window is reported (0 = not).
    var serverPID: Int32 = 0

    static let usage = """
        Usage: ProtocolLoadBench --port PORT [options]
          Borrow+Return load against adloaderd on 127.0.0.1 (the only host it connects to).
          --port P          daemon port on 127.0.0.1 (required)
          --connections N   connections, 1...1024 (default 32)
          --depth D         calls in flight per connection, 1...128 (default 1)
          --duration S      measured seconds, 0.1...300 (default 5)
          --warmup S        seconds before measuring, 0...60 (default 1)
          --rate R          open loop: R calls/s over all connections, latency from the
                            intended send time; 0 = closed loop (default 0)
          --max-calls N     stop measuring after N calls (default: no limit)
          --batch           closed loop in batches: send D calls, wait for all D answers,
                            send the next D (what redis-benchmark -P does); default: each
                            answer sends that slot's next call at once
          --ad-unit ID      ad unit to borrow from (default bench-feed)
          --shown           return every lease shown (consumed: the pool refills from
                            upstream); default: unshown, back in the pool
          --label TEXT      copied into the JSON line
          --server-pid PID  the daemon's process: report its CPU time (utime+stime from
                            /proc/PID/stat) over the measured window, per call
          --quiet           only the JSON line
        Output: a table, then one JSON line starting with {"bench":"protocol-load".
        Exit status: 0 ok, 1 the daemon failed a call or stopped serving, 2 bad options.
        """

    /// - Throws: a message naming the bad option; an empty one for `--help`.
    static func parse(_ arguments: [String]) throws(BenchFailure) -> Options {
        var o = Options()
        var sawPort = false
        var help = false
        var scanner = ArgumentScanner(arguments)
        do throws(ArgumentScanner.Failure) {
            scan: while let argument = scanner.next() {
                switch argument {
                case .option("--port"):
                    o.port = UInt16(try scanner.value(in: 1...65535.0))
                    sawPort = true
                case .option("--connections"): o.connections = Int(try scanner.value(in: 1...1024.0))
                case .option("--depth"): o.depth = Int(try scanner.value(in: 1...128.0))
                case .option("--duration"): o.durationSeconds = try scanner.value(in: 0.1...300)
                case .option("--warmup"): o.warmupSeconds = try scanner.value(in: 0...60.0)
                case .option("--rate"): o.rate = try scanner.value(in: 0...10_000_000.0)
                case .option("--max-calls"): o.maxCalls = UInt64(try scanner.value(in: 0...1e12))
                case .option("--ad-unit"): o.adUnitID = try scanner.value()
                case .option("--label"): o.label = try scanner.value()
                case .option("--server-pid"): o.serverPID = Int32(try scanner.value(in: 1...4_194_304.0))
                case .option("--quiet"): o.quiet = true
                case .option("--batch"): o.batch = true
                case .option("--shown"): o.shown = true
                case .option("--help"), .option("-h"):
                    help = true
                    break scan
                case .option(let name), .positional(let name): throw .unknown(name)
                }
            }
        } catch {
            throw BenchFailure(description: error.description)
        }
        if help { throw BenchFailure(description: "") }
        guard sawPort else { throw BenchFailure(description: "--port is required") }
        return o
    }
}
