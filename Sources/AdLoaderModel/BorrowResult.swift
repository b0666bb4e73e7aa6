/// The answer to a borrow.
public enum BorrowResult: Hashable, Sendable {
    /// A lease; `reused` when the slot already held it.
    case leased(Lease, reused: Bool)
    /// The pool was empty (and stayed empty for the wait).
    case noAdYet
    /// The loader shut down, or the loader was disabled while the borrow was parked.
    case unavailable
    /// No ad can arrive within the wait: the source failed with a final error or cannot be
    /// reached, and nothing else is in flight for the pool (fail fast, instead of waiting out
    /// the whole wait). Carries the source's last error.
    case upstreamFailed(UpstreamError)
}
