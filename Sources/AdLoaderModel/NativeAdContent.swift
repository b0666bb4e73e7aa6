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

    public init(
        headline: String, body: String = "", callToAction: String = "", advertiser: String = "",
        icon: AdImage? = nil, image: AdImage? = nil, starRating: Double? = nil, price: String? = nil,
        store: String? = nil, clickURL: String = "", impressionTrackers: [String] = [],
        clickTrackers: [String] = [], adChoicesURL: String? = nil
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
    }
}
