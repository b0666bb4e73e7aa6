import AdLoaderClient
import AdLoaderCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `adloader top`: the pools at a glance in a terminal, refreshed every interval from two Stats
/// snapshots (rates are the difference over the interval; the core's counters never go back).
///
/// Columns: the pool (loader/ad unit); available, leased, in flight and parked now; borrows
/// per second and their hit ratio; upstream requests per second; ads wasted (expired
/// unconsumed) in the interval, with the waste ratio expired / (expired + consumed) since
/// start. Busiest pools first, at most ``maxRows``; every line fits the terminal's width.
enum TopView {
    static let maxRows = 40

    /// Polls and prints until `q`, Ctrl-C or cancelled (or once, after one interval, with `once`).
    static func run(
        client: AdLoaderClient, endpoint: String, loader: String, adUnitID: String, interval: Duration, once: Bool,
        timeout: Duration?
    ) async throws {
        if !once { Terminal.quitOnQ() }
        var previous = try await client.stats(loader: loader, adUnitID: adUnitID, timeout: timeout)
        var previousAt = ContinuousClock.now
        while true {
            try await Task.sleep(for: interval)
            let current = try await client.stats(loader: loader, adUnitID: adUnitID, timeout: timeout)
            let now = ContinuousClock.now
            let seconds =
                Double((now - previousAt).components.attoseconds) / 1e18 + Double((now - previousAt).components.seconds)
            let text = render(
                previous: previous, current: current, seconds: seconds, endpoint: endpoint, at: Date(),
                width: Terminal.columns())
            // Home and clear the screen between views (like top); --once prints plain text.
            print(once ? text : "\u{1B}[H\u{1B}[2J" + text, terminator: "")
            fflush(nil)
            if once { return }
            previous = current
            previousAt = now
        }
    }

    /// One view: summary lines and a table of pools, every line at most `width` characters
    /// (the pool names are cut with "…" first, then whole lines).
    static func render(
        previous: [PoolStats], current: [PoolStats], seconds: Double, endpoint: String, at date: Date, width: Int = 80
    ) -> String {
        struct Row {
            var stats: PoolStats
            var borrowsPerSecond: Double
            var hitRatio: Double?
            var upstreamPerSecond: Double
            var wasted: UInt64
        }
        let before = Dictionary(
            previous.map { ("\($0.loader)\u{0}\($0.adUnitID)", $0) }, uniquingKeysWith: { a, _ in a })
        let span = max(seconds, 0.001)
        var rows: [Row] = []
        for stats in current {
            let old =
                before["\(stats.loader)\u{0}\(stats.adUnitID)"]
                ?? PoolStats(loader: stats.loader, adUnitID: stats.adUnitID)
            let hits = stats.borrowHits &- old.borrowHits
            let misses = stats.borrowMisses &- old.borrowMisses
            rows.append(
                Row(
                    stats: stats, borrowsPerSecond: Double(hits + misses) / span,
                    hitRatio: hits + misses > 0 ? Double(hits) / Double(hits + misses) : nil,
                    upstreamPerSecond: Double(stats.upstreamRequests &- old.upstreamRequests) / span,
                    wasted: stats.expired &- old.expired))
        }
        rows.sort {
            ($0.borrowsPerSecond, $1.stats.loader, $1.stats.adUnitID) > (
                $1.borrowsPerSecond, $0.stats.loader, $0.stats.adUnitID
            )
        }
        let totalBorrows = rows.reduce(0) { $0 + $1.borrowsPerSecond }
        let hits = current.reduce(UInt64(0)) { $0 + $1.borrowHits } &- previous.reduce(UInt64(0)) { $0 + $1.borrowHits }
        let expired = current.reduce(UInt64(0)) { $0 + $1.expired }
        let consumed = current.reduce(UInt64(0)) { $0 + $1.consumed }
        let formatter = ISO8601DateFormatter()
        var lines = ["adloader top — \(endpoint) — \(formatter.string(from: date)) — every \(format(seconds, 1)) s"]
        var summary = "pools \(current.count)  borrows/s \(format(totalBorrows, 1))  hit ratio "
        summary += totalBorrows > 0 ? percent(Double(hits) / (totalBorrows * span)) : "–"
        summary += "  upstream/s \(format(rows.reduce(0) { $0 + $1.upstreamPerSecond }, 1))"
        lines.append(summary)
        lines.append(
            "waste \(expired + consumed > 0 ? percent(Double(expired) / Double(expired + consumed)) : "–")"
                + " (\(expired) expired, \(consumed) consumed in total)   q quits")
        lines.append("")
        if current.isEmpty {
            lines.append("no pools yet")
        } else {
            // POOL is loader/ad unit; WASTED: expired in the interval; WASTE: expired / spent in total.
            let header = ["POOL", "AVAIL", "LEASED", "FLIGHT", "PARKED", "BORROW/S", "HIT", "UP/S", "WASTED", "WASTE"]
            var table = [header]
            for row in rows.prefix(maxRows) {
                let s = row.stats
                let spent = s.expired + s.consumed
                table.append([
                    "\(s.loader)/\(s.adUnitID)", "\(s.available)", "\(s.leased)", "\(s.inFlight)", "\(s.parkedBorrows)",
                    format(row.borrowsPerSecond, 1), row.hitRatio.map(percent) ?? "–", format(row.upstreamPerSecond, 1),
                    "\(row.wasted)", spent > 0 ? percent(Double(s.expired) / Double(spent)) : "–",
                ])
            }
            var widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
            // The numbers keep their width; the pool names get what is left of the line.
            let numbers = widths.dropFirst().reduce(0, +) + (widths.count - 1)
            widths[0] = max(4, min(widths[0], width - numbers - 1))
            for row in table {
                var cells: [String] = []
                for (column, cell) in row.enumerated() {
                    if column == 0 {
                        let name = cell.count > widths[0] ? String(cell.prefix(widths[0] - 1)) + "…" : cell
                        cells.append(name + String(repeating: " ", count: widths[0] - name.count))
                    } else {
                        cells.append(String(repeating: " ", count: widths[column] - cell.count) + cell)
                    }
                }
                lines.append(cells.joined(separator: " "))
            }
            if rows.count > maxRows {
                lines.append("… \(rows.count - maxRows) more pools (filter with --loader / --ad-unit)")
            }
        }
        return lines.map { $0.count > width ? String($0.prefix(max(1, width - 1))) + "…" : $0 }.joined(separator: "\n")
            + "\n"
    }

    private static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    private static func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }
}

/// The terminal for `adloader top`: its width, and `q` to quit (non-canonical input without
/// echo while top runs, restored on q and Ctrl-C).
enum Terminal {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var raw = false

    /// The columns of the terminal on standard output; else $COLUMNS; else 80.
    static func columns() -> Int {
        var size = winsize()
        if isatty(1) == 1, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let value = Int(text), value > 0 { return value }
        return 80
    }

    /// When standard input is a terminal: reads it key by key on a thread and exits on q.
    static func quitOnQ() {
        guard isatty(0) == 1, tcgetattr(0, &saved) == 0 else { return }
        var changed = saved
        changed.c_lflag &= ~tcflag_t(ICANON | ECHO)
        guard tcsetattr(0, TCSANOW, &changed) == 0 else { return }
        raw = true
        signal(SIGINT) { _ in Terminal.quit() }
        signal(SIGTERM) { _ in Terminal.quit() }
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { Terminal.quit() }
            }
        }
    }

    /// Restores the terminal and exits 0 (async-signal-safe calls only).
    static func quit() -> Never {
        if raw { tcsetattr(0, TCSANOW, &saved) }
        _ = write(1, "\r\n", 2)
        _exit(0)
    }
}
