import AdLoaderCore
import AdLoaderLogging
import AdLoaderOperations

/// Tells the log when a demand source fails or stops filling, and when it recovers: without it,
/// an exchange that fails every request shows only as UNAVAILABLE borrows and a falling hit
/// ratio, while the log holds its start lines.
///
/// Each (source, condition) pair warns at once the first time, then at most once per
/// ``interval``, each warning counting what happened since the one before (so a source failing
/// a thousand times a second writes one line per interval, not a thousand). The conditions: a
/// failure of each ``UpstreamError/Code`` class, and ``noFillThreshold`` answers in a row that
/// brought no ad ("stopped filling"; a single empty answer is an ordinary no-bid). The first
/// answer with an ad after a warning logs one info line, "recovered", naming what had been wrong.
///
/// - Important: loop-confined; fed by ``MeasuredDemandSource`` with every answer.
final class DemandSourceLog {
    /// Empty answers in a row that count as "stopped filling".
    static let noFillThreshold = 5

    private struct Condition {
        /// When the last warning was written; nil: never, or since the last recovery.
        var lastWarning: AdInstant?
        /// Events since the last warning.
        var sinceWarning = 0
        /// Events since the last recovery (what the "recovered" line reports).
        var total = 0
        /// The last error message, for the warning.
        var lastMessage = ""
    }

    private let logger: Logger
    private let clock: any AdClock
    /// Shortest time between two warnings of one (source, condition).
    let interval: Duration
    /// Per source: a condition per failure class (``MeasuredDemandSource/failureClasses``
    /// order), then "no fill".
    private var conditions: [String: [Condition]] = [:]
    /// Per source: empty answers in a row.
    private var emptyInARow: [String: Int] = [:]

    init(logger: Logger, clock: any AdClock, interval: Duration) {
        self.logger = logger
        self.clock = clock
        self.interval = interval
    }

    /// Records one answer of `source`, which was asked for `asked` ads.
    func record(source: String, result: Result<[DeliveredAd], UpstreamError>, asked: Int) {
        var states =
            conditions[source] ?? Array(repeating: Condition(), count: MeasuredDemandSource.failureClasses.count + 1)
        defer { conditions[source] = states }
        switch result {
        case .failure(let error):
            let index = MeasuredDemandSource.failureClasses.firstIndex(of: error.code) ?? 0
            states[index].lastMessage = error.message
            count(&states[index], source: source) { since, total in
                logger.warning(
                    "demand source failing",
                    [
                        "source": .string(source), "class": .string(error.code.description),
                        "error": .string(error.message), "failures": .int(Int64(since)),
                        "failuresSinceRecovery": .int(Int64(total)),
                        "nextWarningAfterMs": .int(interval.milliseconds),
                    ])
            }
        case .success(let ads) where ads.isEmpty && asked > 0:
            let run = (emptyInARow[source] ?? 0) + 1
            emptyInARow[source] = run
            guard run >= Self.noFillThreshold else { return }
            let index = states.count - 1
            count(&states[index], source: source) { since, total in
                logger.warning(
                    "demand source stopped filling",
                    [
                        "source": .string(source), "emptyAnswersInARow": .int(Int64(run)),
                        "emptyAnswers": .int(Int64(since)), "nextWarningAfterMs": .int(interval.milliseconds),
                    ])
            }
        case .success:
            emptyInARow[source] = 0
            let classes = MeasuredDemandSource.failureClasses.map(\.description) + ["noFill"]
            let wrong = zip(classes, states).filter { $0.1.lastWarning != nil }
            guard !wrong.isEmpty else {
                // Nothing was warned: forget counts below the warning (e.g. a lone failure).
                for index in states.indices { states[index] = Condition() }
                return
            }
            logger.info(
                "demand source recovered",
                [
                    "source": .string(source), "after": .string(wrong.map(\.0).joined(separator: ",")),
                    "failedOrEmpty": .int(Int64(wrong.reduce(0) { $0 + $1.1.total })),
                ])
            for index in states.indices { states[index] = Condition() }
        }
    }

    /// Counts one event; calls `warn(sinceLastWarning, sinceRecovery)` when one is due.
    private func count(_ state: inout Condition, source: String, warn: (Int, Int) -> Void) {
        state.sinceWarning += 1
        state.total += 1
        let now = clock.now
        if let last = state.lastWarning, now - last < interval { return }
        warn(state.sinceWarning, state.total)
        state.lastWarning = now
        state.sinceWarning = 0
    }
}
