public import AdLoaderCore

/// What an impression asks for and a bid delivers: OpenRTB 2.6's `imp.native`, `imp.banner`,
/// `imp.video` objects and `bid.mtype` (1 banner, 2 video, 4 native; 3, audio, is never
/// requested).
public enum OpenRTBMedia: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case banner
    case video
    case native

    /// `bid.mtype`.
    public var markupType: Int {
        switch self {
        case .banner: 1
        case .video: 2
        case .native: 4
        }
    }

    /// The media of a `bid.mtype`; nil for audio (3) and unknown values.
    public init?(markupType: Int) {
        switch markupType {
        case 1: self = .banner
        case 2: self = .video
        case 4: self = .native
        default: return nil
        }
    }

    public var description: String { rawValue }
}

/// A creative size, `WxH` in configuration (`320x480`).
public struct OpenRTBSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `320x480`; nil unless both sides are 1...10000 pixels.
    public init?(_ text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...10_000).contains(w),
            (1...10_000).contains(h)
        else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}

extension OpenRTBSource.Configuration {
    /// The media an impression of `format` asks for, in the order written: native for a native
    /// loader, else the format's configured list (``interstitialMedia``, ``rewardedMedia``,
    /// ``appOpenMedia``). Empty: this source cannot request the format.
    public func media(for format: AdFormat) -> [OpenRTBMedia] {
        let names: [String]
        switch format {
        case .native: return [.native]
        case .interstitial: names = interstitialMedia
        case .rewarded: names = rewardedMedia
        case .appOpen: names = appOpenMedia
        }
        return names.compactMap(OpenRTBMedia.init(rawValue:))
    }

    /// The configuration key that lists the media of `format`'s impressions; nil for native.
    public static func mediaKey(for format: AdFormat) -> String? {
        switch format {
        case .native: nil
        case .interstitial: "interstitialMedia"
        case .rewarded: "rewardedMedia"
        case .appOpen: "appOpenMedia"
        }
    }

    /// The media a format's list may name: a rewarded impression is a video (OpenRTB 2.6
    /// `rwdd` with `video`), an app-open one full-screen display (banner) or native.
    public static func allowedMedia(for format: AdFormat) -> [OpenRTBMedia] {
        switch format {
        case .native: [.native]
        case .interstitial: [.banner, .video, .native]
        case .rewarded: [.video]
        case .appOpen: [.banner, .native]
        }
    }

    /// The formats this source can request: native, and each full-screen format whose media
    /// list is not empty.
    public var formats: [AdFormat] { AdFormat.allCases.filter { !media(for: $0).isEmpty } }

    /// ``fullScreenSizes`` parsed (after ``validate()``: all of them).
    public var sizes: [OpenRTBSize] { fullScreenSizes.compactMap(OpenRTBSize.init) }
}
