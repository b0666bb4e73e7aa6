/// How failed upstream requests are retried.
public struct RetryPolicy: Hashable, Sendable {
    /// Delay before the first retry.
    public var delay: Duration = .seconds(5)
    /// Each further retry waits `multiplier` times longer (1 = constant), capped at `maximumDelay`.
    public var multiplier: Double = 1
    public var maximumDelay: Duration = .seconds(300)
    /// Random spread applied to each delay, as a fraction (0.2 = ±20 %); 0 = none.
    public var jitter: Double = 0
    /// Automatic retries after consecutive failures; the count restarts after a success.
    /// An explicit prefetch or borrow still loads after the maximum is reached.
    public var maximumCount: Int = 10
    /// While the source reports itself unreachable, one probe request per interval.
    public var probeInterval: Duration = .seconds(30)

    public init() {}
}
