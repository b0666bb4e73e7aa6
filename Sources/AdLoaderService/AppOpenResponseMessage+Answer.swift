package import AdLoaderCore
package import AdLoaderWire

// The core's app-open answer as the wire's message: here, not in the wire, so the wire and the
// client library speak the model only (they do not link the loader).
extension AppOpenResponseMessage {
    /// The answer of the core's ``AppOpenCoordinator``.
    package init(_ answer: AppOpenAnswer) {
        let outcome: Outcome =
            switch answer.outcome {
            case .show: .show
            case .skip: .skip
            case .noAdReady: .noAdReady
            }
        let decision = answer.decision
        self.init(
            outcome: outcome, reason: decision.reason, flags: decision.flags,
            storeUnavailable: answer.storeError != nil,
            counts: decision.counts, reserved: decision.reserved, day: decision.day.description, lease: answer.lease)
    }
}
