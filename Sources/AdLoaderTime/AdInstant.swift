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
