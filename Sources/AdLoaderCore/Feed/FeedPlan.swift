/// What a Plan call asks: which feed, which window of it, and how far ahead.
public struct PlanRequest: Hashable, Sendable {
    /// The client's id of one feed session (one user's scroll through one feed).
    public var feedID: String
    public var adUnitID: String
    public var loader: String
    /// The positions now on screen; they are rendered with this answer.
    public var visible: ClosedRange<Int>
    /// Positions after the last visible one planned too (look-ahead): filled when an ad can
    /// be lent, else "coming"; they are not rendered yet.
    public var ahead: Int
    /// Placement rules for this feed instead of the loader's, within its bounds; taken when
    /// the feed is first planned (a later call must give the same or none).
    public var placement: PlacementRules?
    /// The device's privacy signals: the feed's ads come from the consent class they map to
    /// (nil: the loader's default class), as for a borrow. Taken when the feed is first
    /// planned (a later call must map to the same class).
    public var privacy: PrivacySignals?

    public init(
        feedID: String, adUnitID: String, loader: String = LoaderConfiguration.defaultName, visible: ClosedRange<Int>,
        ahead: Int = 0, placement: PlacementRules? = nil, privacy: PrivacySignals? = nil
    ) {
        self.feedID = feedID
        self.adUnitID = adUnitID
        self.loader = loader
        self.visible = visible
        self.ahead = ahead
        self.placement = placement
        self.privacy = privacy
    }

    /// The most positions one call plans (visible plus ahead).
    public static let maximumWindow = 512
    /// The highest position a call may name.
    public static let maximumPosition = 10_000_000
}

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
