/// How a lease ended: what the caller did, or why the loader ended it itself.
///
/// It steers what ``NativeAdvertisementLoader`` does after the lease (counting a show,
/// serving parked borrows, topping up) and gives the `returned` event its reason. What
/// becomes of the ad is decided by the ad's own state, not by this.
enum LeaseEnd: Equatable {
    /// The client returned it, shown or not.
    case returned(shown: Bool)
    /// The client returned it and invalidated its creative (the ad was marked for removal,
    /// reason `.invalidated`, just before).
    case invalidated(shown: Bool)
    /// The lease timeout ended it; the ad counts as unshown.
    case reclaimed
    /// The loader ended it because its ad is being dropped: `.expired` when its slot is
    /// borrowed again after the ad expired, `.disabled` when its slot is borrowed again after
    /// the loader was disabled (and enabled again) while it was out, `.shutdown` at shutdown.
    case adDropped(AdDropReason)

    /// Whether the ad was shown under this lease.
    var shown: Bool { self == .returned(shown: true) || self == .invalidated(shown: true) }

    /// Whether the client invalidated the ad's creative with this end.
    var invalidates: Bool { if case .invalidated = self { true } else { false } }

    /// The reason the `returned` event carries: nil when the client returned the lease.
    var eventReason: AdEvent.Reason? {
        switch self {
        case .returned, .invalidated: nil
        case .reclaimed: .reclaimed
        case .adDropped(let reason): AdEvent.Reason(reason)
        }
    }
}
