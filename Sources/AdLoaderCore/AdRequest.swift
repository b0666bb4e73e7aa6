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
