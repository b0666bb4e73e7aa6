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
          --label TEXT      copied into the JSON line
          --server-pid PID  the daemon's process: report its CPU time (utime+stime from
                            /proc/PID/stat) over the measured window, per call
          --quiet           only the JSON line
        Output: a table, then one JSON line starting with {"bench":"protocol-load".
        Exit status: 0 ok, 1 the daemon failed a call or stopped serving, 2 bad options.
        """

    /// - Throws: a message naming the bad option.
    static func parse(_ arguments: [String]) throws(BenchFailure) -> Options {
        var o = Options()
        var sawPort = false
        var i = 0
        func value(_ name: String) throws(BenchFailure) -> String {
            i += 1
            guard i < arguments.count else { throw BenchFailure(description: "\(name) needs a value") }
            return arguments[i]
        }
        func number(_ name: String, _ range: ClosedRange<Double>) throws(BenchFailure) -> Double {
            let text = try value(name)
            guard let v = Double(text), range.contains(v) else {
                throw BenchFailure(description: "\(name) must be a number in \(range), got \(text)")
            }
            return v
        }
        while i < arguments.count {
            let name = arguments[i]
            switch name {
            case "--port":
                o.port = UInt16(try number(name, 1...65535))
                sawPort = true
            case "--connections": o.connections = Int(try number(name, 1...1024))
            case "--depth": o.depth = Int(try number(name, 1...128))
            case "--duration": o.durationSeconds = try number(name, 0.1...300)
            case "--warmup": o.warmupSeconds = try number(name, 0...60)
            case "--rate": o.rate = try number(name, 0...10_000_000)
            case "--max-calls": o.maxCalls = UInt64(try number(name, 0...1e12))
            case "--ad-unit": o.adUnitID = try value(name)
            case "--label": o.label = try value(name)
            case "--server-pid": o.serverPID = Int32(try number(name, 1...4_194_304))
            case "--quiet": o.quiet = true
            case "--batch": o.batch = true
            case "--help", "-h": throw BenchFailure(description: "")
            default: throw BenchFailure(description: "unknown option \(name)")
            }
            i += 1
        }
        guard sawPort else { throw BenchFailure(description: "--port is required") }
        return o
    }
}
