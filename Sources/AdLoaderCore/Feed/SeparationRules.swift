/// Which ads one feed keeps apart: each rule on or off, with a distance in positions.
///
/// Two ads at positions `p` and `q` break a rule with distance `d` when they share what the
/// rule compares and `|p - q| < d`: distance 10 with an ad every 5 positions keeps neighbouring
/// ads apart and lets every other one match. What an ad does not say (no advertiser domain, no
/// category) matches nothing. The plan never places an ad in breach: a position whose only
/// available ads would break a rule stays "coming" and the pool asks for more.
public struct SeparationRules: Hashable, Sendable {
    /// The same creative (``CreativeKey``) closer than this; nil: off.
    public var creativeDistance: Int?
    /// A shared advertiser domain (``Ad/advertiserDomains``) closer than this; nil: off.
    public var advertiserDomainDistance: Int?
    /// A shared IAB category (``Ad/categories``) closer than this; nil: off.
    public var categoryDistance: Int?
    /// No creative twice in one feed session, however far apart.
    public var creativeOncePerFeed: Bool

    /// The largest distance accepted.
    public static let maximumDistance = 1_000

    /// Every creative once per feed, advertisers 10 positions apart, categories 6.
    public init(
        creativeDistance: Int? = nil, advertiserDomainDistance: Int? = 10, categoryDistance: Int? = 6,
        creativeOncePerFeed: Bool = true
    ) {
        self.creativeDistance = creativeDistance
        self.advertiserDomainDistance = advertiserDomainDistance
        self.categoryDistance = categoryDistance
        self.creativeOncePerFeed = creativeOncePerFeed
    }

    /// No rule at all.
    public static let none = SeparationRules(
        creativeDistance: nil, advertiserDomainDistance: nil, categoryDistance: nil, creativeOncePerFeed: false)

    /// The largest distance of a rule that is on (0: none).
    public var reach: Int { max(creativeDistance ?? 0, advertiserDomainDistance ?? 0, categoryDistance ?? 0) }

    /// Checks every field; the error names the first one out of range under `prefix`.
    /// - Throws: ``ConfigError``.
    public func validate(prefix: String) throws(ConfigError) {
        for (name, value) in [
            ("creative", creativeDistance), ("advertiserDomain", advertiserDomainDistance),
            ("category", categoryDistance),
        ] {
            if let value, !(1...Self.maximumDistance).contains(value) {
                throw ConfigError(
                    field: "\(prefix).\(name)",
                    message: "must be 1...\(Self.maximumDistance) positions or null (off), got \(value)")
            }
        }
    }
}
