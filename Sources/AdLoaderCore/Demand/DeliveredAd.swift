/// One ad as a ``DemandSource`` delivers it, before the loader gives it an id and a pool.
public struct DeliveredAd: Hashable, Sendable {
    public var creative: AdCreative
    /// The source's own expiry (e.g. OpenRTB `bid.exp`); the ad expires at the sooner of
    /// this and the loader's lifetime.
    public var sourceExpiry: AdInstant?
    /// What the source wants back in its notices about this ad (price, notice URLs, bid id);
    /// kept with the ad as ``Ad/sourceContext``, never sent to clients.
    public var context: (any AdSourceContext)?
    /// The source's own id of the creative (OpenRTB `bid.crid`), if it has one: what
    /// identifies the creative when a client invalidates it (``CreativeKey``). Empty counts
    /// as none.
    public var creativeID: String?

    public init(
        creative: AdCreative, sourceExpiry: AdInstant? = nil, context: (any AdSourceContext)? = nil,
        creativeID: String? = nil
    ) {
        self.creative = creative
        self.sourceExpiry = sourceExpiry
        self.context = context
        self.creativeID = creativeID?.isEmpty == true ? nil : creativeID
    }

    /// Field-wise; contexts by identity.
    public static func == (lhs: DeliveredAd, rhs: DeliveredAd) -> Bool {
        lhs.creative == rhs.creative && lhs.sourceExpiry == rhs.sourceExpiry && lhs.context === rhs.context
            && lhs.creativeID == rhs.creativeID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(creative)
        hasher.combine(sourceExpiry)
        hasher.combine(context.map(ObjectIdentifier.init))
        hasher.combine(creativeID)
    }
}
