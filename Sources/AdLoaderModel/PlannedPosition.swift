/// The answer for one ad position of a planned window.
public struct PlannedPosition: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        /// The position carries this ad under this lease; it keeps it for the feed's life.
        case ad(Lease)
        /// Not rendered yet and no ad could be lent within the separation rules: ask again.
        case coming
        /// Rendered without an ad: it never gets one later (no ad popping in under a finger).
        case empty
    }

    public var position: Int
    public var state: State

    public init(position: Int, state: State) {
        self.position = position
        self.state = state
    }

    /// Whether the position has its ad, which every later answer repeats.
    public var isGuaranteed: Bool {
        if case .ad = state { return true }
        return false
    }
}

/// The answer of a Plan call: every ad position of the window, ascending.
public struct FeedPlan: Hashable, Sendable {
    public var positions: [PlannedPosition]
    /// Whether this call created the feed's state.
    public var created: Bool

    public init(positions: [PlannedPosition], created: Bool) {
        self.positions = positions
        self.created = created
    }
}

/// Counters of the feed plan, loader-wide (Stats, `/metrics`).
public struct FeedStats: Hashable, Sendable {
    /// Feeds whose answers are kept now.
    public var feedsHeld = 0
    /// Ad positions answered for the first time.
    public var positionsPlanned: UInt64 = 0
    /// Ad positions that got their ad (once each).
    public var positionsFilled: UInt64 = 0
    /// Answers "coming" (a position may be answered so in several calls).
    public var comingAnswers: UInt64 = 0
    /// Ad positions rendered without an ad.
    public var positionsEmpty: UInt64 = 0
    /// Fill attempts where available ads were passed over because they would have broken a
    /// separation rule (the position stayed coming or empty instead).
    public var separationHolds: UInt64 = 0
    /// Feeds forgotten after their idle timeout.
    public var feedsExpired: UInt64 = 0
    /// New feeds refused at ``LoaderConfiguration/maximumFeeds``.
    public var feedsRefused: UInt64 = 0
    /// Filled positions not rendered yet whose ad was lost before they were (it expired or
    /// was dropped): planned again.
    public var guaranteesLost: UInt64 = 0

    public init() {}
}
