/// What ``AppOpenCoordinator/appOpen(_:adUnitID:loader:isWanted:completion:)`` decided: the
/// outcome for the app, the policy's decision behind it, the store's failure if the counts
/// could not be read, and the lease when the app is to show.
public struct AppOpenAnswer: Hashable, Sendable {
    public enum Outcome: Hashable, Sendable {
        /// Show the ad of ``AppOpenAnswer/lease``; its shown Return confirms the show.
        case show
        /// Do not show; the decision's reason says why.
        case skip
        /// The policy says show, but the pool had no ad ready; nothing was counted or reserved.
        case noAdReady
    }

    public var outcome: Outcome
    /// The policy's decision: reason, flags, confirmed and reserved counts, day.
    public var decision: AppOpenDecision
    /// Why the counts could not be read (they read 0); nil when they could.
    public var storeError: CapStoreError?
    /// Set for ``Outcome/show``.
    public var lease: Lease?

    public init(outcome: Outcome, decision: AppOpenDecision, storeError: CapStoreError? = nil, lease: Lease? = nil) {
        self.outcome = outcome
        self.decision = decision
        self.storeError = storeError
        self.lease = lease
    }
}
