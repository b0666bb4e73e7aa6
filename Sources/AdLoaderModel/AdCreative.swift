/// What an ad shows: native assets, or a full-screen creative.
public enum AdCreative: Hashable, Sendable {
    /// Assets of a native ad (``AdFormat/native``).
    case native(NativeAdContent)
    /// A full-screen creative (``AdFormat/interstitial``, ``AdFormat/rewarded``, ``AdFormat/appOpen``).
    case fullScreen(FullScreenCreative)

    /// The native assets, or nil for a full-screen creative.
    public var nativeContent: NativeAdContent? {
        if case .native(let content) = self { content } else { nil }
    }

    /// The full-screen creative, or nil for native assets.
    public var fullScreenCreative: FullScreenCreative? {
        if case .fullScreen(let creative) = self { creative } else { nil }
    }

    /// Whether a loader of `format` can serve this creative: native assets for a native,
    /// interstitial or app-open loader (a full-screen native ad the app lays out itself), a
    /// full-screen creative for the full-screen formats. A rewarded ad is a video (or markup)
    /// creative, never native assets.
    public func fits(_ format: AdFormat) -> Bool {
        switch self {
        case .native: format != .rewarded
        case .fullScreen: format.isFullScreen
        }
    }
}
