public import AdLoaderTime
internal import CLibUV

#if canImport(Glibc)
    import Glibc
#endif

/// The core's clock and scheduler on a libuv loop.
///
/// `now` is the loop's cached monotonic time (`uv_now`, refreshed once per iteration, like
/// redis's `server.unixtime`) shifted to Unix milliseconds by an offset read from the wall
/// clock once at start: it never jumps when the wall clock is set.
///
/// Scheduling keeps a min-heap of deadlines driving ONE `uv_timer_t`. The daemon holds
/// thousands of pending tasks (lease timeouts, parked borrows, call deadlines, connection
/// timeouts) that are mostly cancelled before they fire; a heap makes schedule and cancel
/// O(log n) and O(1) with no handle allocated, started or closed per task, where a timer
/// per task would cost an allocation, two libuv calls and a close callback each.
/// Cancelled entries are dropped lazily when they reach the top, and the heap is compacted
/// when they are the majority.
///
/// No starvation: one firing runs only the actions due and scheduled before it began.
/// Actions they schedule — even at a deadline already past — wait at least one loop
/// iteration, so I/O always gets a turn. (libuv runs a timer restarted with 0 ms from its
/// own callback again in the same pass, so a deadline in the past re-armed from `fire()`
/// would never let the loop reach its poll; such a timer is armed with 1 ms instead.)
///
/// - Important: loop-confined. Actions run from the timer callback, never from inside
///   ``schedule(at:_:)``; same-deadline actions run in the order they were scheduled.
public final class LoopClock: AdClock, AdScheduler {
    private let loop: UVLoop
    private let timer: UVTimer
    private let offset: Int64
    // Stored properties are `@exclusivity(unchecked)`: loop-confined, and no method holds an
    // access across a call out (actions run after their entry left the heap), so the dynamic
    // exclusivity checks only cost time.
    @exclusivity(unchecked) private var heap: [Entry] = []
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0
    @exclusivity(unchecked) private var cancelledInHeap = 0
    @exclusivity(unchecked) private var armedDeadline: Int64?
    @exclusivity(unchecked) private var isClosed = false
    @exclusivity(unchecked) private var isFiring = false

    /// - Parameters:
    ///   - loop: the loop whose timer drives the actions.
    ///   - start: "now" at creation; the default reads the wall clock.
    /// - Throws: ``UVError`` when the timer cannot be created.
    public init(loop: UVLoop, start: AdInstant? = nil) throws(UVError) {
        self.loop = loop
        timer = try UVTimer(loop: loop)
        let wall = start?.unixMilliseconds ?? Self.wallClockMilliseconds()
        offset = wall - Int64(loop.now)
    }

    public var now: AdInstant { AdInstant(unixMilliseconds: offset + Int64(loop.now)) }

    /// Actions scheduled and neither run nor cancelled.
    public var pendingCount: Int { heap.count - cancelledInHeap }

    public func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask {
        let task = Task(clock: self, action: action)
        guard !isClosed else {
            task.markDone()
            return task
        }
        push(Entry(deadline: deadline.unixMilliseconds, sequence: nextSequence, task: task))
        nextSequence &+= 1
        armTimer()
        return task
    }

    /// Drops every pending action and closes the timer.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        for entry in heap { entry.task.markDone() }
        heap.removeAll()
        cancelledInHeap = 0
        timer.close()
    }

    fileprivate func taskCancelled() {
        cancelledInHeap += 1
        if cancelledInHeap > 64, cancelledInHeap * 2 > heap.count { compact() }
    }

    private func fire() {
        armedDeadline = nil
        isFiring = true
        defer { isFiring = false }
        let current = now.unixMilliseconds
        // Actions scheduled while these run wait for the next firing: no starvation.
        let limit = nextSequence
        while let top = heap.first, top.deadline <= current, top.sequence < limit {
            popTop()
            if top.task.isDone {
                cancelledInHeap -= 1
                continue
            }
            top.task.run()
            if isClosed { return }
        }
        dropCancelledTop()
        armTimer()
    }

    private func armTimer() {
        dropCancelledTop()
        guard !isClosed, let top = heap.first else {
            if armedDeadline != nil {
                timer.stop()
                armedDeadline = nil
            }
            return
        }
        if let armed = armedDeadline, armed <= top.deadline { return }
        armedDeadline = top.deadline
        // From inside fire(), 0 ms would run again in this same timer pass (see above).
        let delay = max(isFiring ? 1 : 0, top.deadline - now.unixMilliseconds)
        timer.start(timeout: UInt64(delay)) { [unowned self] in self.fire() }
    }

    private func dropCancelledTop() {
        while let top = heap.first, top.task.isDone {
            popTop()
            cancelledInHeap -= 1
        }
    }

    private func compact() {
        heap.removeAll { $0.task.isDone }
        cancelledInHeap = 0
        // Re-heapify bottom-up.
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    // MARK: Binary heap ordered by (deadline, sequence)

    private struct Entry {
        var deadline: Int64
        var sequence: UInt64
        var task: Task

        static func before(_ a: Entry, _ b: Entry) -> Bool {
            (a.deadline, a.sequence) < (b.deadline, b.sequence)
        }
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Entry.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Entry.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Entry.before(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    public static func wallClockMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }

    private final class Task: ScheduledTask {
        private weak var clock: LoopClock?
        @exclusivity(unchecked) private var action: (() -> Void)?

        init(clock: LoopClock, action: @escaping () -> Void) {
            self.clock = clock
            self.action = action
        }

        var isDone: Bool { action == nil }

        func markDone() { action = nil }

        func cancel() {
            guard action != nil else { return }
            action = nil
            clock?.taskCancelled()
        }

        func run() {
            let action = self.action
            self.action = nil
            action?()
        }
    }
}
