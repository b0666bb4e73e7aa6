/// An ``AppOpenPolicy`` decision: show or not, why, every flag it used, and the counts it
/// read, so a client can apply its own filter on top.
public struct AppOpenDecision: Hashable, Sendable {
    /// Why the policy decided as it did; ``shows`` says which way.
    public enum Reason: Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Show: the app's first launch (``AppOpenPolicy/showOnFirstLaunch``).
        case firstLaunch
        /// Show: a launch that is not the first (``AppOpenPolicy/showOnColdStart``).
        case coldStart
        /// Show: a return after at least ``AppOpenPolicy/backgroundThreshold`` in the background.
        case hotStart
        /// Skip: the first launch, and the policy does not show on it.
        case firstLaunchExcluded
        /// Skip: a launch that is not the first, and the policy does not show on cold starts.
        case coldStartExcluded
        /// Skip: a return after less than the background threshold.
        case belowThreshold
        /// Skip: a return from unlocking the screen, which the policy excludes.
        case fromUnlock
        /// Skip: the session reached ``AppOpenPolicy/maximumShowsPerSession``.
        case sessionCapReached
        /// Skip: the device's day reached ``AppOpenPolicy/maximumShowsPerDay``.
        case dailyCapReached
        /// Skip: the cap store could not be read and the service refuses to show blind
        /// (the daemon's outage setting).
        case storeUnavailable

        /// Whether the reason is one to show.
        public var shows: Bool {
            switch self {
            case .firstLaunch, .coldStart, .hotStart: true
            default: false
            }
        }

        /// The name used in logs and by the CLI, e.g. "daily cap reached".
        public var description: String {
            switch self {
            case .firstLaunch: "first launch"
            case .coldStart: "cold start"
            case .hotStart: "hot start"
            case .firstLaunchExcluded: "first launch excluded"
            case .coldStartExcluded: "cold start excluded"
            case .belowThreshold: "below background threshold"
            case .fromUnlock: "return from unlock excluded"
            case .sessionCapReached: "session cap reached"
            case .dailyCapReached: "daily cap reached"
            case .storeUnavailable: "cap store unavailable"
            }
        }
    }

    /// Every condition the policy evaluated, whatever decided.
    public struct Flags: Hashable, Sendable {
        /// The request said this is the app's first launch.
        public var firstLaunch: Bool
        /// A launch that is not the first: ``AppOpenPolicy/showOnColdStart`` applied.
        public var coldStart: Bool
        /// The background time reached the policy's threshold.
        public var thresholdReached: Bool
        /// The session's count reached its cap (false when unlimited).
        public var sessionCapReached: Bool
        /// The day's count reached its cap (false when unlimited).
        public var dailyCapReached: Bool
        /// The request said the return came from unlocking the screen.
        public var fromUnlock: Bool

        public init(
            firstLaunch: Bool = false, coldStart: Bool = false, thresholdReached: Bool = false,
            sessionCapReached: Bool = false, dailyCapReached: Bool = false, fromUnlock: Bool = false
        ) {
            self.firstLaunch = firstLaunch
            self.coldStart = coldStart
            self.thresholdReached = thresholdReached
            self.sessionCapReached = sessionCapReached
            self.dailyCapReached = dailyCapReached
            self.fromUnlock = fromUnlock
        }
    }

    public var reason: Reason
    public var flags: Flags
    /// The confirmed shows the decision read (before this call: counts move only when the
    /// client returns the ad as shown).
    public var counts: AppOpenCounts
    /// The shows decided before this call and neither confirmed nor released (reservations,
    /// see ``AppOpenPolicy/reservationTimeout``); caps apply to `counts` plus these.
    public var reserved: AppOpenCounts
    /// The device's day the daily count is for.
    public var day: LocalDay

    public init(
        reason: Reason, flags: Flags, counts: AppOpenCounts, reserved: AppOpenCounts = AppOpenCounts(), day: LocalDay
    ) {
        self.reason = reason
        self.flags = flags
        self.counts = counts
        self.reserved = reserved
        self.day = day
    }

    /// Whether to show an app-open ad.
    public var shows: Bool { reason.shows }
}
