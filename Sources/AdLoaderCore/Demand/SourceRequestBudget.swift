/// The live state of one source's ``RequestRateBudget``: its token bucket and the pools
/// waiting for a token, served on-screen first (see
/// ``NativeAdvertisementLoader/serveBudgetQueue(_:)``).
///
/// - Important: loop-confined like its loader.
final class SourceRequestBudget {
    /// A pool waiting for a token, held weakly: a pool removed meanwhile is skipped.
    struct Waiting {
        weak var reference: AdPoolReference?
    }

    /// The source's name, for the configuration's keys and messages.
    let source: String
    let budget: RequestRateBudget
    private let perMillisecond: Double
    /// Requests that may be sent now; up to ``RequestRateBudget/capacity``.
    private(set) var tokens: Double
    private var updatedAt: Int64
    /// Pools waiting for a token, in arrival order (each at most once: ``AdPool/budgetWait``).
    var waiting: [Waiting] = []
    /// Wakes up when the next token is in the bucket, while pools wait.
    var timer: (any ScheduledTask)?
    /// The pool the queue is serving: its next request takes the token it was served for,
    /// even though pools of its kind still wait behind it.
    var grantee: ObjectIdentifier?
    /// The pool the queue is serving and the wait it was served for, while its top-up runs.
    var serving: (pool: ObjectIdentifier, wait: AdPool.BudgetWait)?
    /// Top-ups that had to wait for a token.
    var waits: UInt64 = 0

    init(source: String, budget: RequestRateBudget, now: Int64) {
        self.source = source
        self.budget = budget
        self.perMillisecond = budget.maximumRequestsPerSecond / 1_000
        self.tokens = budget.capacity
        self.updatedAt = now
    }

    /// Adds the tokens earned since the last refill, up to the capacity.
    func refill(at now: Int64) {
        guard now > updatedAt else { return }
        tokens = min(budget.capacity, tokens + Double(now - updatedAt) * perMillisecond)
        updatedAt = now
    }

    /// Whether a request may be sent now (after ``refill(at:)``).
    var hasToken: Bool { tokens >= 1 }

    /// Spends one token: a request is being sent.
    func take() {
        precondition(tokens >= 1, "request sent without a token")
        tokens -= 1
    }

    /// Milliseconds until a whole token is in the bucket: 0 when one is, else at least 1.
    var millisecondsUntilToken: Int64 {
        let missing = 1 - tokens
        guard missing > 0 else { return 0 }
        return max(1, Int64((missing / perMillisecond).rounded(.up)))
    }
}
