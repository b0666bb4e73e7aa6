/// The answer to a borrow.
public enum BorrowResult: Hashable, Sendable {
    /// A lease; `reused` when the slot already held it.
    case leased(Lease, reused: Bool)
    /// The pool was empty (and stayed empty for the wait).
    case noAdYet
    /// The loader shut down, or the loader was disabled while the borrow was parked.
    case unavailable
}
