/// A borrow waiting for an ad; the handle given back by a parking ``NativeAdvertisementLoader/borrow(adUnitID:loader:slot:wait:completion:)``.
final class ParkedBorrowHandle: ParkedBorrow {
    let slot: String?
    private var completion: ((BorrowResult) -> Void)?
    var timer: (any ScheduledTask)?
    private let onWithdraw: (ParkedBorrowHandle) -> Void

    init(slot: String?, completion: @escaping (BorrowResult) -> Void, onWithdraw: @escaping (ParkedBorrowHandle) -> Void) {
        self.slot = slot
        self.completion = completion
        self.onWithdraw = onWithdraw
    }

    /// Still waiting: neither answered nor cancelled.
    var isWaiting: Bool { completion != nil }

    func cancel() {
        guard isWaiting else { return }
        completion = nil
        timer?.cancel()
        timer = nil
        onWithdraw(self)
    }

    /// Stops waiting and hands back the completion to call (nil when already answered or
    /// cancelled), so the owner can settle its own state before running caller code.
    func take() -> ((BorrowResult) -> Void)? {
        guard let completion else { return nil }
        self.completion = nil
        timer?.cancel()
        timer = nil
        return completion
    }
}

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
