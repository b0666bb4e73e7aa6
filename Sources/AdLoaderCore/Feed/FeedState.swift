/// What the loader keeps about one planned feed: its rules and every ad position answered.
///
/// - Important: loop-confined like its loader.
final class FeedState {
    /// One answered ad position.
    enum Answer {
        /// Lent under `leaseID`; `rendered` once a call showed the position visible.
        case filled(FilledPosition)
        /// Planned ahead, no ad yet.
        case coming
        /// Rendered without an ad.
        case empty
    }

    struct FilledPosition {
        var ad: Ad
        var leaseID: UInt64
        var slot: String
        var leaseExpiresAt: AdInstant
        var rendered: Bool
    }

    let key: FeedKey
    let placement: PlacementRules
    let separation: SeparationRules
    /// The consent class its ads are lent from, taken at the first call.
    let consentClass: String
    var answers: [Int: Answer] = [:]
    /// Creatives placed in this feed (``SeparationRules/creativeOncePerFeed``).
    var creatives: Set<CreativeKey> = []
    /// Ads placed in this feed: never two positions with one ad.
    var adIDs: Set<String> = []
    /// Filled positions not rendered yet: each call renews their leases, wherever the window
    /// is, so a position skipped by a jump still has its ad when the user scrolls back to it.
    var unrendered: Set<Int> = []
    /// Unix milliseconds of the last Plan call.
    var lastCallAt: Int64
    /// Bumped at each call; the idle queue's entries with an older value are stale.
    var touch: UInt64 = 0

    init(key: FeedKey, placement: PlacementRules, separation: SeparationRules, consentClass: String, now: Int64) {
        self.key = key
        self.placement = placement
        self.separation = separation
        self.consentClass = consentClass
        self.lastCallAt = now
    }

    /// The slot key of `position`: feed id and position, so a scroll back meets the same lease.
    func slot(for position: Int) -> String { "\(key.feedID)#\(position)" }

    /// Whether `ad` may go at `position` under the rules, given the positions filled so far.
    func allows(_ ad: Ad, at position: Int, creative: CreativeKey) -> Bool {
        if adIDs.contains(ad.id) { return false }
        if separation.creativeOncePerFeed && creatives.contains(creative) { return false }
        let reach = separation.reach
        guard reach > 1 else { return true }
        for other in (position - reach + 1)...(position + reach - 1) where other != position {
            guard case .filled(let filled)? = answers[other] else { continue }
            let distance = abs(other - position)
            if let d = separation.creativeDistance, distance < d, CreativeKey(filled.ad) == creative { return false }
            if let d = separation.advertiserDomainDistance, distance < d,
                Self.intersects(filled.ad.advertiserDomains, ad.advertiserDomains)
            {
                return false
            }
            if let d = separation.categoryDistance, distance < d, Self.intersects(filled.ad.categories, ad.categories) {
                return false
            }
        }
        return true
    }

    private static func intersects(_ a: [String], _ b: [String]) -> Bool {
        for x in a where b.contains(x) { return true }
        return false
    }
}

/// A feed's identity: the same feed id under another loader or ad unit is another feed.
struct FeedKey: Hashable {
    var loader: String
    var adUnitID: String
    var feedID: String
}
