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
