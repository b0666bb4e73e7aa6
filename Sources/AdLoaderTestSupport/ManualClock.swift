public import AdLoaderTime

/// A clock and scheduler for tests: time moves only when a test calls ``advance(by:)``.
///
/// Actions scheduled for the same deadline run in the order they were scheduled; an action
/// that schedules another one due within the advanced span sees it run in the same call.
public final class ManualClock: AdClock, AdScheduler {
    public private(set) var now: AdInstant
    private var tasks: [Task] = []
    private var nextSequence: UInt64 = 0

    /// - Parameter start: the initial time; any value works, the default is a recent date.
    public init(start: AdInstant = AdInstant(unixMilliseconds: 1_780_000_000_000)) {
        self.now = start
    }

    public func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask {
        let task = Task(deadline: deadline, sequence: nextSequence, action: action)
        nextSequence += 1
        tasks.append(task)
        return task
    }

    /// Actions not yet run nor cancelled.
    public var pendingCount: Int { tasks.lazy.filter { !$0.isDone }.count }

    /// The earliest pending deadline, if any.
    public var nextDeadline: AdInstant? { tasks.lazy.filter { !$0.isDone }.map(\.deadline).min() }

    /// Moves time forward by `duration`, running every action due by then in deadline order,
    /// each with `now` set to its deadline.
    public func advance(by duration: Duration) {
        advance(to: now + duration)
    }

    /// Moves time forward to `instant` (never backward), running due actions in order.
    public func advance(to instant: AdInstant) {
        while let task = nextDue(by: instant) {
            if task.deadline > now { now = task.deadline }
            task.run()
        }
        if instant > now { now = instant }
    }

    /// Runs actions already due without moving time.
    public func runDue() {
        advance(to: now)
    }

    private func nextDue(by instant: AdInstant) -> Task? {
        tasks.removeAll { $0.isDone }
        var best: Task?
        for task in tasks where task.deadline <= instant {
            if let current = best, (current.deadline, current.sequence) <= (task.deadline, task.sequence) { continue }
            best = task
        }
        return best
    }

    private final class Task: ScheduledTask {
        let deadline: AdInstant
        let sequence: UInt64
        private var action: (() -> Void)?

        init(deadline: AdInstant, sequence: UInt64, action: @escaping () -> Void) {
            self.deadline = deadline
            self.sequence = sequence
            self.action = action
        }

        var isDone: Bool { action == nil }

        func cancel() { action = nil }

        func run() {
            let action = self.action
            self.action = nil
            action?()
        }
    }
}
