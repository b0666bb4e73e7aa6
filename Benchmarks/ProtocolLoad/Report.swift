/// Formats an outcome as a table and one JSON line.
enum Report {
    static func render(_ o: Options, _ outcome: LoadGenerator.Outcome) -> String {
        let c = outcome.counters
        let h = c.histogram
        let rate = Double(c.calls) / outcome.measuredSeconds
        func us(_ ns: UInt64) -> String { fixed(Double(ns) / 1000, 1) }
        let mode =
            o.rate > 0 ? "open loop at \(Int(o.rate)) calls/s" : o.batch ? "closed loop in batches" : "closed loop"
        var text = ""
        if !o.quiet {
            text +=
                "protocol-load: adloaderd 127.0.0.1:\(o.port), \(o.connections) conns x \(o.depth) in flight, \(mode), "
            text += "\(fixed(outcome.measuredSeconds, 2)) s measured after \(fixed(o.warmupSeconds, 1)) s warmup\n"
            var header = [
                "calls/s", "p50 us", "p99 us", "p99.9 us", "max us", "calls", "borrows", "returns", "no-ad", "errors",
            ]
            var row = [
                fixed(rate, 0), us(h.quantile(0.5)), us(h.quantile(0.99)), us(h.quantile(0.999)), us(h.maximum),
                "\(c.calls)", "\(c.borrows)", "\(c.returns)", "\(c.noAdYet)", "\(c.errors)",
            ]
            if let cpu = outcome.serverCPU {
                header += ["server cpu us/call", "user", "sys"]
                row += [perCall(cpu.total, c.calls), perCall(cpu.user, c.calls), perCall(cpu.system, c.calls)]
            }
            if let io = outcome.serverIO {
                header += ["calls/read", "calls/write"]
                row += [ratio(c.calls, io.reads), ratio(c.calls, io.writes)]
            }
            let widths = zip(header, row).map { max($0.count, $1.count) }
            text += zip(header, widths).map { pad($0, $1) }.joined(separator: "  ") + "\n"
            text += zip(row, widths).map { pad($0, $1) }.joined(separator: "  ") + "\n"
        }
        var json = "{\"bench\":\"protocol-load\",\"server\":\"adloaderd\",\"label\":\"\(escape(o.label))\""
        json +=
            ",\"connections\":\(o.connections),\"depth\":\(o.depth),\"rate\":\(fixed(o.rate, 0)),\"batch\":\(o.batch)"
        json +=
            ",\"seconds\":\(fixed(outcome.measuredSeconds, 3)),\"calls\":\(c.calls),\"calls_per_s\":\(fixed(rate, 0))"
        json +=
            ",\"p50_us\":\(us(h.quantile(0.5))),\"p99_us\":\(us(h.quantile(0.99))),\"p999_us\":\(us(h.quantile(0.999)))"
        json += ",\"max_us\":\(us(h.maximum)),\"mean_us\":\(fixed(h.mean / 1000, 1))"
        json += ",\"borrows\":\(c.borrows),\"returns\":\(c.returns),\"no_ad_yet\":\(c.noAdYet),\"errors\":\(c.errors)"
        json +=
            ",\"response_bytes_per_call\":\(c.calls == 0 ? 0 : c.responseBytes / c.calls),\"leases_left\":\(outcome.leasesLeft)"
        if let cpu = outcome.serverCPU {
            json += ",\"server_cpu_s\":\(fixed(cpu.total, 3)),\"server_cpu_us_per_call\":\(perCall(cpu.total, c.calls))"
            json +=
                ",\"server_user_us_per_call\":\(perCall(cpu.user, c.calls)),\"server_sys_us_per_call\":\(perCall(cpu.system, c.calls))"
        }
        if let io = outcome.serverIO {
            json +=
                ",\"server_calls_per_read\":\(ratio(c.calls, io.reads)),\"server_calls_per_write\":\(ratio(c.calls, io.writes))"
        }
        return text + json + "}\n"
    }

    /// `calls / count`, 2 decimals (0 when nothing was counted).
    static func ratio(_ calls: UInt64, _ count: UInt64) -> String {
        count == 0 ? "0" : fixed(Double(calls) / Double(count), 2)
    }

    /// Microseconds of `seconds` per call, 3 decimals.
    static func perCall(_ seconds: Double, _ calls: UInt64) -> String {
        calls == 0 ? "0" : fixed(seconds * 1e6 / Double(calls), 3)
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * scale).rounded()
        let whole = Int(scaled / scale)
        guard digits > 0 else { return "\(Int(scaled))" }
        var fraction = "\(Int(abs(scaled)) % Int(scale))"
        while fraction.count < digits { fraction = "0" + fraction }
        return (scaled < 0 && whole == 0 ? "-" : "") + "\(whole).\(fraction)"
    }

    private static func pad(_ s: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - s.count)) + s
    }

    private static func escape(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: if ch.value >= 0x20 { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}
