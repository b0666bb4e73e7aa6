/// What kind of ad a loader keeps: native ads shown inside a feed, or full-screen ads shown
/// over the app.
///
/// Pools, leases and expiry work the same for every format; the format decides which
/// creative a loader accepts (``AdCreative/fits(_:)``) and what its source is asked for
/// (``AdRequest/format``).
public enum AdFormat: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Assets (headline, body, images, ...) the app lays out in its own cells. The default.
    case native
    /// A full-screen ad shown at a natural break (between levels, after an article).
    case interstitial
    /// A full-screen ad the user chooses to watch for a reward.
    case rewarded
    /// A full-screen ad shown while the app starts or returns to the foreground.
    case appOpen

    /// Whether the format's creative is a ``FullScreenCreative`` (else ``NativeAdContent``).
    public var isFullScreen: Bool { self != .native }

    /// The configuration name: "native", "interstitial", "rewarded", "appOpen".
    public var name: String {
        switch self {
        case .native: "native"
        case .interstitial: "interstitial"
        case .rewarded: "rewarded"
        case .appOpen: "appOpen"
        }
    }

    /// The format named `name` (as ``name`` spells it); nil when unknown.
    public init?(name: String) {
        guard let format = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = format
    }

    public var description: String { name }
}
