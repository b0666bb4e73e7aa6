/// What a loader asks its demand source for: the loader's request template for one ad unit.
public struct AdRequest: Hashable, Sendable {
    public var adUnitID: String
    public var keywords: [String]
    public var contentURL: String?
    public var nonPersonalized: Bool
    /// Free-form targeting key/values passed to the source as they are.
    public var targeting: [String: String]

    public init(
        adUnitID: String, keywords: [String] = [], contentURL: String? = nil, nonPersonalized: Bool = false,
        targeting: [String: String] = [:]
    ) {
        self.adUnitID = adUnitID
        self.keywords = keywords
        self.contentURL = contentURL
        self.nonPersonalized = nonPersonalized
        self.targeting = targeting
    }
}

/// An image asset of a native ad.
public struct AdImage: Hashable, Sendable {
    public var url: String
    public var width: Int
    public var height: Int

    public init(url: String, width: Int = 0, height: Int = 0) {
        self.url = url
        self.width = width
        self.height = height
    }
}

/// The creative of one native ad as a demand source delivers it.
public struct NativeAdContent: Hashable, Sendable {
    public var headline: String
    public var body: String
    public var callToAction: String
    public var advertiser: String
    public var icon: AdImage?
    public var image: AdImage?
    /// 0...5; nil when not rated.
    public var starRating: Double?
    public var price: String?
    public var store: String?
    public var clickURL: String
    public var impressionTrackers: [String]
    public var clickTrackers: [String]
    public var adChoicesURL: String?
    /// The source's own expiry (e.g. OpenRTB `bid.exp`); the ad expires at the sooner of
    /// this and the loader's lifetime.
    public var sourceExpiry: AdInstant?

    public init(
        headline: String, body: String = "", callToAction: String = "", advertiser: String = "",
        icon: AdImage? = nil, image: AdImage? = nil, starRating: Double? = nil, price: String? = nil,
        store: String? = nil, clickURL: String = "", impressionTrackers: [String] = [],
        clickTrackers: [String] = [], adChoicesURL: String? = nil, sourceExpiry: AdInstant? = nil
    ) {
        self.headline = headline
        self.body = body
        self.callToAction = callToAction
        self.advertiser = advertiser
        self.icon = icon
        self.image = image
        self.starRating = starRating
        self.price = price
        self.store = store
        self.clickURL = clickURL
        self.impressionTrackers = impressionTrackers
        self.clickTrackers = clickTrackers
        self.adChoicesURL = adChoicesURL
        self.sourceExpiry = sourceExpiry
    }
}

/// Why an upstream request failed, and so how the loader reacts.
public struct UpstreamError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable { case retryable, unreachable, final }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// A transient failure (timeout, 5xx): retried after the retry delay.
        public static let retryable = Code(.retryable)
        /// The network or the exchange cannot be reached: the loader waits and probes.
        public static let unreachable = Code(.unreachable)
        /// The request itself is wrong (4xx, bad configuration): not retried automatically.
        public static let final = Code(.final)

        public var description: String {
            switch wrapped {
            case .retryable: "retryable"
            case .unreachable: "unreachable"
            case .final: "final"
            }
        }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// Where ads come from: asked for 1...5 ads with a loader's request, answers later.
///
/// - Important: `loadAds` is called on the loader's thread and `completion` must be called
///   exactly once, on that same thread, and not from inside `loadAds` itself. A source may
///   deliver fewer ads than asked (partial fill), including none.
public protocol DemandSource: AnyObject {
    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[NativeAdContent], UpstreamError>) -> Void)
}
