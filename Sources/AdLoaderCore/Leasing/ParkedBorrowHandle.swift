/// A borrow waiting for an ad; the handle in the ``BorrowOutcome/parked(_:)`` answer of
/// ``NativeAdvertisementLoader/borrow(adUnitID:loader:slot:wait:mayPark:excluding:whenServed:)``.
final class ParkedBorrowHandle: ParkedBorrow {
    let slot: String?
    /// Ads this borrow must not be lent, if any.
    let exclusion: AdExclusion?
    private var whenServed: ((BorrowResult) -> Void)?
    var timer: (any ScheduledTask)?
    private let onWithdraw: (ParkedBorrowHandle) -> Void

    init(
        slot: String?, exclusion: AdExclusion? = nil, whenServed: @escaping (BorrowResult) -> Void,
        onWithdraw: @escaping (ParkedBorrowHandle) -> Void
    ) {
        self.slot = slot
        self.exclusion = exclusion
        self.whenServed = whenServed
        self.onWithdraw = onWithdraw
    }

    /// Still waiting: neither answered nor cancelled.
    var isWaiting: Bool { whenServed != nil }

    func cancel() {
        guard isWaiting else { return }
        whenServed = nil
        timer?.cancel()
        timer = nil
        onWithdraw(self)
    }

    /// Stops waiting and hands back the closure to answer with (nil when already answered or
    /// cancelled), so the owner can settle its own state before running caller code.
    func take() -> ((BorrowResult) -> Void)? {
        guard let whenServed else { return nil }
        self.whenServed = nil
        timer?.cancel()
        timer = nil
        return whenServed
    }
}
