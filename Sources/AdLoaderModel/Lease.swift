public import AdLoaderTime

/// An ad lent to a feed cell until it is returned or the lease times out.
public struct Lease: Hashable, Sendable {
    /// Never 0.
    public var id: UInt64
    /// The feed cell, or nil when the borrow named none.
    public var slot: String?
    public var expiresAt: AdInstant
    public var ad: Ad

    public init(id: UInt64, slot: String?, expiresAt: AdInstant, ad: Ad) {
        self.id = id
        self.slot = slot
        self.expiresAt = expiresAt
        self.ad = ad
    }
}
