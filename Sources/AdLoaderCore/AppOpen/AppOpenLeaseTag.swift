/// What a lease lent by an AppOpen SHOW carries in the loader's lease table: whose counts
/// its shown Return moves, and the reservation its SHOW holds until then.
///
/// Created by ``AppOpenCoordinator``; the loader tells it when its lease ends, however it
/// ends (``leaseEnded()``).
///
/// - Important: loop-confined.
final class AppOpenLeaseTag {
    /// The device, session and offset of the decision; `day` is the decision's day (the
    /// reservation's; a confirmed show counts on the day of its Return).
    let key: CapKey
    let sessionTimeout: Duration
    /// Whether the SHOW still counts as reserved.
    var isReserved = true
    /// A shown Return of the lease is being counted by the store.
    var isConfirming = false
    /// Ends the reservation at the policy's reservation timeout, when that comes before the
    /// lease's own end.
    var timer: (any ScheduledTask)?
    weak var coordinator: AppOpenCoordinator?

    init(key: CapKey, sessionTimeout: Duration, coordinator: AppOpenCoordinator) {
        self.key = key
        self.sessionTimeout = sessionTimeout
        self.coordinator = coordinator
    }

    /// Called by the loader as the lease ends (returned, reclaimed, dropped, shut down).
    func leaseEnded() { coordinator?.leaseEnded(self) }
}

extension NativeAdvertisementLoader {
    /// Tags the open lease `leaseID` as lent by an AppOpen SHOW.
    /// - Returns: false when no such lease is open.
    func tagAppOpenLease(_ leaseID: UInt64, _ tag: AppOpenLeaseTag) -> Bool {
        guard let handle = leases.handle(forID: leaseID, ids: ids) else { return false }
        leases[handle].appOpen = tag
        return true
    }

    /// The app-open tag of the open lease `leaseID`; nil for a lease of another kind or none.
    func appOpenTag(ofLease leaseID: UInt64) -> AppOpenLeaseTag? {
        guard !isShutDown, let handle = leases.handle(forID: leaseID, ids: ids) else { return nil }
        return leases[handle].appOpen
    }
}
