/// A point in time in milliseconds since the Unix epoch, as read from an ``AdClock``.
///
/// The core never reads the system clock: the daemon derives `AdInstant`s from the event
/// loop's cached monotonic time, tests from a manual clock.
public struct AdInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var unixMilliseconds: Int64

    public init(unixMilliseconds: Int64) {
        self.unixMilliseconds = unixMilliseconds
    }

    public static func < (lhs: AdInstant, rhs: AdInstant) -> Bool {
        lhs.unixMilliseconds < rhs.unixMilliseconds
    }

    public static func + (lhs: AdInstant, rhs: Duration) -> AdInstant {
        AdInstant(unixMilliseconds: lhs.unixMilliseconds &+ rhs.milliseconds)
    }

    public static func - (lhs: AdInstant, rhs: AdInstant) -> Duration {
        .milliseconds(lhs.unixMilliseconds &- rhs.unixMilliseconds)
    }

    public var description: String { "\(unixMilliseconds)ms" }
}

extension Duration {
    /// This duration in whole milliseconds, rounded toward zero.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000 &+ attoseconds / 1_000_000_000_000_000
    }
}

/// The source of "now" for the core.
///
/// - Important: read only on the thread that owns the loader.
public protocol AdClock: AnyObject {
    var now: AdInstant { get }
}

/// A cancellable piece of work registered with an ``AdScheduler``.
public protocol ScheduledTask: AnyObject {
    /// Cancels the task; its action will not run. Cancelling twice or after it ran is harmless.
    func cancel()
}

/// Runs actions at a later time on the loader's own thread.
///
/// The daemon implements it with libuv timers; tests with a manual clock whose
/// `advance(by:)` runs due actions in deadline order.
///
/// - Important: actions run on the thread that owns the loader, never re-entrantly from
///   inside `schedule(at:_:)` itself, even when the deadline is already past.
public protocol AdScheduler: AnyObject {
    func schedule(at deadline: AdInstant, _ action: @escaping () -> Void) -> any ScheduledTask
}
