/// The FIFO of a pool's parked borrows.
///
/// Cancelled and timed-out borrows stay in the array as dead entries until they reach the
/// head or the array is compacted, so withdrawing one is O(1) amortised.
struct ParkedBorrowQueue {
    private var items: [ParkedBorrowHandle] = []
    private var head = 0
    /// Borrows still waiting.
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    mutating func append(_ handle: ParkedBorrowHandle) {
        items.append(handle)
        count += 1
    }

    /// The oldest borrow still waiting.
    mutating func first() -> ParkedBorrowHandle? {
        while head < items.count, !items[head].isWaiting { head += 1 }
        compactIfSparse()
        return head < items.count ? items[head] : nil
    }

    /// Takes the oldest waiting borrow out of the queue.
    mutating func removeFirst() -> ParkedBorrowHandle? {
        guard let handle = first() else { return nil }
        head += 1
        count -= 1
        return handle
    }

    /// Notes that a queued borrow stopped waiting (cancelled or timed out).
    mutating func noteWithdrawn() {
        count -= 1
        compactIfSparse()
    }

    /// Takes every waiting borrow out, oldest first.
    mutating func removeAll() -> [ParkedBorrowHandle] {
        let waiting = items[head...].filter(\.isWaiting)
        items.removeAll()
        head = 0
        count = 0
        return waiting
    }

    private mutating func compactIfSparse() {
        guard items.count >= 32, items.count > 2 * count else { return }
        items = items[head...].filter(\.isWaiting)
        head = 0
    }
}
