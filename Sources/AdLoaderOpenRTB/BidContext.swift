public import AdLoaderCore

/// What an OpenRTB source keeps with each ad it delivers: the bid's price and notice URLs, for
/// its win/billing notice when shown and its loss notice when dropped unshown.
public final class BidContext: AdSourceContext {
    /// The macro values of this bid (loss reason unset).
    public let macros: NoticeMacros
    /// `burl`, else `nurl`: fired once when the ad is first shown; empty = none.
    public let winURL: String
    /// `lurl`: fired when the ad is dropped unshown; empty = none.
    public let lossURL: String
    public let creativeID: String
    public let advertiserDomains: [String]

    public init(macros: NoticeMacros, winURL: String, lossURL: String, creativeID: String, advertiserDomains: [String])
    {
        self.macros = macros
        self.winURL = winURL
        self.lossURL = lossURL
        self.creativeID = creativeID
        self.advertiserDomains = advertiserDomains
    }
}
