/// What names one pool of a loader: the ad unit and the consent class its ads were bought
/// for. An ad bought for one class is never lent to a borrower of another.
public struct PoolKey: Hashable, Sendable, Comparable {
    public var adUnitID: String
    public var consentClass: String

    public init(adUnitID: String, consentClass: String = "default") {
        self.adUnitID = adUnitID
        self.consentClass = consentClass
    }

    public static func < (lhs: PoolKey, rhs: PoolKey) -> Bool {
        (lhs.adUnitID, lhs.consentClass) < (rhs.adUnitID, rhs.consentClass)
    }
}
