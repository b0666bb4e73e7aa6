package import AdLoaderLogging

/// Logs each change of readiness (what `/readyz` and `adloader_ready` report) with its reasons:
/// one info line when the daemon turns unready ("every demand source unreachable", "draining")
/// and one when it is ready again, so the log says why a load balancer took the replica out.
///
/// - Important: loop-confined; ``check()`` runs after every demand source answer and at each
///   change of the daemon's state.
package final class ReadinessLog {
    private let logger: Logger
    private let readiness: () -> (ready: Bool, reasons: [String])
    private var last: (ready: Bool, reasons: [String])?

    package init(logger: Logger, readiness: @escaping () -> (ready: Bool, reasons: [String])) {
        self.logger = logger
        self.readiness = readiness
    }

    /// Takes the current readiness as the baseline without logging it (at start).
    package func baseline() { last = readiness() }

    /// Logs when readiness (or, while unready, its reasons) changed since the last check.
    package func check() {
        let now = readiness()
        guard let previous = last else {
            last = now
            return
        }
        guard now.ready != previous.ready || now.reasons != previous.reasons else { return }
        last = now
        if now.ready {
            logger.info("ready", ["was": .string(previous.reasons.joined(separator: "; "))])
        } else {
            logger.info("not ready", ["reason": .string(now.reasons.joined(separator: "; "))])
        }
    }
}
