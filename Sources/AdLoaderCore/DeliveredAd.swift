/// One ad as a ``DemandSource`` delivers it, before the loader gives it an id and a pool.
public struct DeliveredAd: Hashable, Sendable {
    public var creative: AdCreative
    /// The source's own expiry (e.g. OpenRTB `bid.exp`); the ad expires at the sooner of
    /// this and the loader's lifetime.
    public var sourceExpiry: AdInstant?

    public init(creative: AdCreative, sourceExpiry: AdInstant? = nil) {
        self.creative = creative
        self.sourceExpiry = sourceExpiry
    }
}
