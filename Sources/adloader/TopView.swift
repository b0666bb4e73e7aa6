import AdLoaderClient
import AdLoaderCore
import Foundation

/// `adloader top`: the pools at a glance in a terminal, refreshed every interval from two Stats
/// snapshots (rates are the difference over the interval; the core's counters never go back).
///
/// Columns: available, leased, in flight and parked now; borrows per second and their hit
/// ratio; upstream requests per second; ads wasted (expired unconsumed) in the interval and
/// in total, with the waste ratio expired / (expired + consumed) since start. Busiest pools
/// first, at most ``maxRows``.
enum TopView {
    static let maxRows = 40

    /// Polls and prints until cancelled (or once, after one interval, with `once`).
    static func run(
        client: AdLoaderClient, endpoint: String, loader: String, adUnitID: String, interval: Duration, once: Bool,
        timeout: Duration?
    ) async throws {
        var previous = try await client.stats(loader: loader, adUnitID: adUnitID, timeout: timeout)
        var previousAt = ContinuousClock.now
        while true {
            try await Task.sleep(for: interval)
            let current = try await client.stats(loader: loader, adUnitID: adUnitID, timeout: timeout)
            let now = ContinuousClock.now
            let seconds = Double((now - previousAt).components.attoseconds) / 1e18 + Double((now - previousAt).components.seconds)
            let text = render(previous: previous, current: current, seconds: seconds, endpoint: endpoint, at: Date())
            // Home and clear the screen between views (like top); --once prints plain text.
            print(once ? text : "\u{1B}[H\u{1B}[2J" + text, terminator: "")
            fflush(nil)
            if once { return }
            previous = current
            previousAt = now
        }
    }

    /// One view: a summary line and a table of pools.
    static func render(previous: [PoolStats], current: [PoolStats], seconds: Double, endpoint: String, at date: Date) -> String {
        struct Row {
            var stats: PoolStats
            var borrowsPerSecond: Double
            var hitRatio: Double?
            var upstreamPerSecond: Double
            var wasted: UInt64
        }
        let before = Dictionary(previous.map { ("\($0.loader)\u{0}\($0.adUnitID)", $0) }, uniquingKeysWith: { a, _ in a })
        let span = max(seconds, 0.001)
        var rows: [Row] = []
        for stats in current {
            let old = before["\(stats.loader)\u{0}\(stats.adUnitID)"] ?? PoolStats(loader: stats.loader, adUnitID: stats.adUnitID)
            let hits = stats.borrowHits &- old.borrowHits
            let misses = stats.borrowMisses &- old.borrowMisses
            rows.append(
                Row(
                    stats: stats, borrowsPerSecond: Double(hits + misses) / span,
                    hitRatio: hits + misses > 0 ? Double(hits) / Double(hits + misses) : nil,
                    upstreamPerSecond: Double(stats.upstreamRequests &- old.upstreamRequests) / span,
                    wasted: stats.expired &- old.expired))
        }
        rows.sort { ($0.borrowsPerSecond, $1.stats.loader, $1.stats.adUnitID) > ($1.borrowsPerSecond, $0.stats.loader, $0.stats.adUnitID) }
        let totalBorrows = rows.reduce(0) { $0 + $1.borrowsPerSecond }
        let hits = current.reduce(UInt64(0)) { $0 + $1.borrowHits } &- previous.reduce(UInt64(0)) { $0 + $1.borrowHits }
        let expired = current.reduce(UInt64(0)) { $0 + $1.expired }
        let consumed = current.reduce(UInt64(0)) { $0 + $1.consumed }
        let formatter = ISO8601DateFormatter()
        var out = "adloader top — \(endpoint) — \(formatter.string(from: date)) — every \(format(seconds, 1)) s\n"
        out += "pools \(current.count)   borrows/s \(format(totalBorrows, 1))   hit ratio "
        out += totalBorrows > 0 ? percent(Double(hits) / (totalBorrows * span)) : "–"
        out += "   upstream/s \(format(rows.reduce(0) { $0 + $1.upstreamPerSecond }, 1))"
        out += "   waste \(expired + consumed > 0 ? percent(Double(expired) / Double(expired + consumed)) : "–")"
        out += " (\(expired) expired, \(consumed) consumed)\n\n"
        let header = [
            "LOADER", "AD UNIT", "AVAIL", "LEASED", "FLIGHT", "PARKED", "BORROW/S", "HIT", "UPSTREAM/S", "WASTED",
            "WASTED TOTAL", "WASTE",
        ]
        var table = [header]
        for row in rows.prefix(maxRows) {
            let s = row.stats
            let spent = s.expired + s.consumed
            table.append([
                s.loader, s.adUnitID, "\(s.available)", "\(s.leased)", "\(s.inFlight)", "\(s.parkedBorrows)",
                format(row.borrowsPerSecond, 1), row.hitRatio.map(percent) ?? "–", format(row.upstreamPerSecond, 1),
                "\(row.wasted)", "\(s.expired)", spent > 0 ? percent(Double(s.expired) / Double(spent)) : "–",
            ])
        }
        if current.isEmpty { return out + "no pools yet\n" }
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            out += row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column < 2 ? cell + pad : pad + cell
            }.joined(separator: "  ") + "\n"
        }
        if rows.count > maxRows { out += "… \(rows.count - maxRows) more pools (filter with --loader / --ad-unit)\n" }
        return out
    }

    private static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    private static func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }
}
