/// The advertisers of one synthetic theme, as real demand has them: a few frequent, many rare.
///
/// Each theme has its five named advertisers (the head) and 35 invented long-tail ones, and
/// an ad's advertiser is drawn with Zipf weights `1 / rank` over all 40: the first takes about
/// 23 % of the theme's ads, the head together about 53 %, each tail advertiser 0.6–1.2 %.
/// Every advertiser has a domain (under `.example`, RFC 2606) and one IAB content category
/// (taxonomy 1.0 codes: the theme's tier-1 category and a tier-2 one), so the feed plan's
/// separation rules meet what an exchange's `adomain` and `cat` give them.
struct SyntheticAdvertisers: Sendable {
    struct Advertiser: Sendable {
        var name: String
        var domain: String
        var category: String
    }

    /// Advertisers per theme, head first.
    static let perTheme = 40

    /// By theme, in ``SyntheticCatalog/themes`` order; each list ordered by rank.
    static let byTheme: [[Advertiser]] = SyntheticCatalog.themes.enumerated().map { index, theme in
        make(theme: theme, index: index)
    }

    /// Cumulative Zipf weights (`1 / rank`), normalised to end at 1.
    static let cumulativeWeights: [Double] = {
        let weights = (1...perTheme).map { 1 / Double($0) }
        let total = weights.reduce(0, +)
        var sum = 0.0
        return weights.map {
            sum += $0
            return sum / total
        }
    }()

    /// The rank (0-based) a uniform draw in 0..<1 falls on.
    static func rank(for draw: Double) -> Int {
        var low = 0
        var high = perTheme - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulativeWeights[middle] > draw { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// IAB tier-1 category of each theme (Content Taxonomy 1.0).
    private static let tier1: [String: Int] = [
        "travel": 20, "finance": 13, "food": 8, "fitness": 7, "games": 9, "tech": 19, "fashion": 18,
        "home": 10, "auto": 2, "education": 5,
    ]

    private static let tailFirst = [
        "Amber", "Birch", "Cobalt", "Dune", "Ember", "Fable", "Granite", "Harbor", "Indigo", "Juniper", "Kelp",
        "Lumen", "Meadow", "Nectar", "Opal", "Prism", "Quill", "Ridge", "Sable", "Thistle", "Umber", "Vale",
        "Willow", "Yarrow", "Zephyr",
    ]
    private static let tailSecond = ["Works", "Supply", "Goods", "Collective", "House", "Studio", "Lab"]

    private static func make(theme: SyntheticCatalog.Theme, index: Int) -> [Advertiser] {
        let category = tier1[theme.name] ?? 24
        var names = theme.advertisers
        var k = index * 7
        while names.count < perTheme {
            let name =
                "\(tailFirst[k % tailFirst.count]) \(theme.name.prefix(1).uppercased() + theme.name.dropFirst()) "
                + tailSecond[(k / tailFirst.count) % tailSecond.count]
            if !names.contains(name) { names.append(name) }
            k += 1
        }
        return names.enumerated().map { rank, name in
            // Tier-2 codes 1...8 of the tier-1 category, spread over the ranks so that
            // frequent advertisers do not all share one.
            Advertiser(
                name: name, domain: SyntheticSource.slug(name) + ".example",
                category: "IAB\(category)-\(rank % 8 + 1)")
        }
    }
}
