#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tables on stdout and files for plotting.
enum Report {
    static func format(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "inf" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (abs(value) * scale).rounded()
        let whole = Int(rounded / scale)
        let fraction = Int(rounded) - whole * Int(scale)
        var text = (value < 0 && rounded > 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    static func milliseconds(_ value: Int64) -> String { value == .max ? "never" : String(value) }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    static let header = [
        "strategy", "retained", "appear", "hit%", "no-ad%", "p50ms", "p90ms", "p99ms", "impr", "re-views", "requests",
        "req/impr", "loaded", "unshown%", "peakLeased",
    ]

    static func cells(_ result: StrategyResult) -> [String] {
        [
            result.strategy, result.retained.map(String.init) ?? "-", String(result.appearances),
            format(result.hitRatio * 100, 2), format(result.neverRatio * 100, 2), milliseconds(result.p50),
            milliseconds(result.p90), milliseconds(result.p99), String(result.impressions), String(result.reviews),
            String(result.upstream.requests), format(result.requestsPerImpression, 3), String(result.upstream.loaded),
            format(result.unshownRatio * 100, 2),
            result.strategy.hasPrefix("adloaderd") ? String(result.peakLeased) : "-",
        ]
    }

    static func printTable(_ results: [StrategyResult]) {
        let rows = [header] + results.map(cells)
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(row.indices.map { pad(row[$0], widths[$0]) }.joined(separator: "  "))
        }
    }

    static func printTargets(_ result: StrategyResult) {
        func verdict(_ met: Bool) -> String { met ? "met" : "MISSED" }
        print(
            """

            targets (adloaderd, retained \(result.retained ?? 0), measured after the warm-up):
              upstream requests per impression < 0.25: \(format(result.requestsPerImpression, 3)) \
            \(verdict(result.requestsPerImpression < 0.25))
              borrow hit ratio > 99%:                  \(format(result.hitRatio * 100, 2))% \
            \(verdict(result.hitRatio > 0.99))
              loaded but expired unshown < 5%:         \(format(result.unshownRatio * 100, 2))% \
            \(verdict(result.unshownRatio < 0.05))
              (leases reclaimed by the lease timeout: \(result.leasesReclaimed); ads left in the pool at the end: \
            \(result.leftInPool))
            """)
    }

    /// <label>.csv: one line per run; <label>-delays.dat: time to ad by percentile, one
    /// column per strategy of the main comparison (NaN where the cell never had an ad).
    static func write(
        main: [StrategyResult], sweep: [StrategyResult], options: FeedScroll.Options, to directory: String
    )
        throws
    {
        mkdir(directory, 0o755)
        var csv =
            "scenario,strategy,retained,seed,users,duration_s,appearances,hit_ratio,no_ad_ratio,p50_ms,p90_ms,p99_ms,"
            + "impressions,reviews,upstream_requests,requests_per_impression,loaded,unshown_ratio,peak_leased\n"
        for (scenario, results) in [("main", main), ("sweep", sweep)] {
            for result in results {
                let fields: [String] = [
                    scenario, result.strategy, result.retained.map(String.init) ?? "", String(options.trace.seed),
                    String(options.trace.users), format(options.trace.duration, 0), String(result.appearances),
                    format(result.hitRatio, 5), format(result.neverRatio, 5), csvMilliseconds(result.p50),
                    csvMilliseconds(result.p90), csvMilliseconds(result.p99), String(result.impressions),
                    String(result.reviews), String(result.upstream.requests), format(result.requestsPerImpression, 4),
                    String(result.upstream.loaded), format(result.unshownRatio, 5),
                    result.retained == nil ? "" : String(result.peakLeased),
                ]
                csv += fields.joined(separator: ",") + "\n"
            }
        }
        try writeFile("\(directory)/\(options.label).csv", csv)

        var dat =
            "# percent " + main.map(\.strategy).joined(separator: " ") + "  (virtual ms until the cell has its ad)\n"
        var percents: [Double] = Array(stride(from: 1.0, through: 99.0, by: 1.0))
        percents += [99.5, 99.9]
        for percent in percents {
            let values = main.map { result -> String in
                let value = StrategyResult.percentile(result.sortedDelays, percent / 100)
                return value == .max ? "NaN" : String(value)
            }
            dat += format(percent, 1) + " " + values.joined(separator: " ") + "\n"
        }
        try writeFile("\(directory)/\(options.label)-delays.dat", dat)
    }

    static func csvMilliseconds(_ value: Int64) -> String { value == .max ? "inf" : String(value) }

    struct WriteError: Error, CustomStringConvertible {
        var path: String
        var description: String { "cannot write \(path)" }
    }

    static func writeFile(_ path: String, _ text: String) throws {
        guard let file = fopen(path, "w") else { throw WriteError(path: path) }
        defer { fclose(file) }
        guard fputs(text, file) >= 0 else { throw WriteError(path: path) }
    }
}
