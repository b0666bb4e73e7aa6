/// What a loader asks its demand source for: the loader's request template for one ad unit.
public struct AdRequest: Hashable, Sendable {
    public var adUnitID: String
    /// The kind of ad wanted; the source answers with creatives of that kind
    /// (``AdCreative/fits(_:)``). Ads that do not fit are dropped as invalidated.
    public var format: AdFormat
    public var keywords: [String]
    public var contentURL: String?
    public var nonPersonalized: Bool
    /// Free-form targeting key/values passed to the source as they are.
    public var targeting: [String: String]

    public init(
        adUnitID: String, format: AdFormat = .native, keywords: [String] = [], contentURL: String? = nil,
        nonPersonalized: Bool = false, targeting: [String: String] = [:]
    ) {
        self.adUnitID = adUnitID
        self.format = format
        self.keywords = keywords
        self.contentURL = contentURL
        self.nonPersonalized = nonPersonalized
        self.targeting = targeting
    }
}
