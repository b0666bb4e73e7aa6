/// The creative of one full-screen ad (interstitial, rewarded, app-open) as a demand source
/// delivers it: what to render, how, and what it rewards.
public struct FullScreenCreative: Hashable, Sendable {
    /// What the app renders.
    public enum Media: Hashable, Sendable {
        /// HTML (or MRAID) markup, rendered in a web view: a banner bid's `adm`, as the source sent it.
        case markup(String)
        /// A video (e.g. an MP4 media file), played full screen.
        case videoURL(String)
        /// A VAST XML document (a video bid's `adm`, as the source sent it), played by the app's
        /// VAST player, which fires its tracking events.
        case vastXML(String)
    }

    /// The screen orientation the creative is made for.
    public enum Orientation: Hashable, Sendable {
        case any
        case portrait
        case landscape
    }

    /// What a rewarded ad gives the user once watched, e.g. 10 "coins".
    public struct Reward: Hashable, Sendable {
        public var type: String
        public var amount: Int

        public init(type: String, amount: Int) {
            self.type = type
            self.amount = amount
        }
    }

    public var media: Media
    public var orientation: Orientation
    /// The creative's size in pixels; 0 when the source gave none.
    public var width: Int
    public var height: Int
    /// Set for rewarded ads.
    public var reward: Reward?

    public init(
        media: Media, orientation: Orientation = .any, width: Int = 0, height: Int = 0, reward: Reward? = nil
    ) {
        self.media = media
        self.orientation = orientation
        self.width = width
        self.height = height
        self.reward = reward
    }
}
