/// How a borrow was answered: now, later, or not at all because it may not wait.
///
/// Returned by ``NativeAdvertisementLoader/borrow(adUnitID:loader:slot:wait:mayPark:excluding:whenServed:)``,
/// so the caller learns from the return value whether the call is finished or waiting; the
/// `whenServed` closure given to that borrow is never called from inside it.
public enum BorrowOutcome {
    /// Answered now (lent, reused, or no ad yet when wait is zero).
    case answered(BorrowResult)
    /// Parked: `whenServed` will be called exactly once later, unless the handle is cancelled first.
    case parked(any ParkedBorrow)
    /// The borrow would have parked but `mayPark` was false (the caller's parked-borrow limit);
    /// counted as a miss, top-up started, as for a zero-wait miss.
    case parkingRefused
}
