/// A handle on a borrow that is waiting for an ad (``BorrowOutcome/parked(_:)``).
public protocol ParkedBorrow: AnyObject {
    /// Withdraws the borrow (client cancelled or went away); its `whenServed` is not called.
    /// Cancelling twice, or after it was served, is harmless.
    func cancel()
}
