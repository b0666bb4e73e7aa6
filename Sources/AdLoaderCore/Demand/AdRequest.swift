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
    /// The consent class the ads are bought for (part of the pool's key) and what its requests
    /// carry: the class's configured terms, never a borrower's own signals.
    public var consentClass: String
    public var consent: ConsentTerms
    /// How long an ad of this request may wait in the pool before its impression: the loader's
    /// lifetime (an exchange's `imp.exp`); nil: not said.
    public var usableLife: Duration?
    /// The loader's floor price (nil: the source's own), in ``bidFloorCurrency`` (nil: the
    /// source's currency).
    public var bidFloor: Double?
    public var bidFloorCurrency: String?

    public init(
        adUnitID: String, format: AdFormat = .native, keywords: [String] = [], contentURL: String? = nil,
        nonPersonalized: Bool = false, targeting: [String: String] = [:], consentClass: String = "default",
        consent: ConsentTerms = ConsentTerms()
    ) {
        self.adUnitID = adUnitID
        self.format = format
        self.keywords = keywords
        self.contentURL = contentURL
        self.nonPersonalized = nonPersonalized
        self.targeting = targeting
        self.consentClass = consentClass
        self.consent = consent
    }
}
