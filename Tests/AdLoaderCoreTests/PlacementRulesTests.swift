import AdLoaderCore
import Testing

@Suite struct PlacementRulesTests {
    @Test(
        arguments: [
            // (fixed, interval, maximum, range, expected)
            ([1, 4], 5, 256, 0..<20, [1, 4, 9, 14, 19]),
            ([], 5, 256, 0..<20, [4, 9, 14, 19]),
            ([], 2, 3, 0..<20, [1, 3, 5]),
            ([0, 2], nil, 256, 0..<20, [0, 2]),
            ([3], 4, 256, 8..<20, [11, 15, 19]),
            ([3], 4, 256, 7..<8, [7]),
            ([10, 20], 10, 4, 0..<100, [10, 20, 30, 40]),
        ] as [([Int], Int?, Int, Range<Int>, [Int])])
    func positionsFollowMoPubsSemantics(fixed: [Int], interval: Int?, maximum: Int, range: Range<Int>, expected: [Int])
        throws
    {
        let rules = PlacementRules(fixedPositions: fixed, repeatingInterval: interval, maximumAdsPerFeed: maximum)
        try rules.validate(prefix: "p")
        #expect(rules.adPositions(in: range) == expected)
        for position in range { #expect(rules.carriesAd(position) == expected.contains(position), "\(position)") }
    }

    @Test func adIndexCountsFixedThenRepeating() {
        let rules = PlacementRules(fixedPositions: [1, 4], repeatingInterval: 5, maximumAdsPerFeed: 256)
        #expect(rules.adIndex(at: 1) == 0 && rules.adIndex(at: 4) == 1 && rules.adIndex(at: 9) == 2)
        #expect(rules.adIndex(at: -1) == nil && rules.adIndex(at: 5) == nil)
        let capped = PlacementRules(fixedPositions: [], repeatingInterval: 2, maximumAdsPerFeed: 256)
        #expect(capped.adIndex(at: 511) == 255 && capped.adIndex(at: 513) == nil, "at most 256 ads")
    }

    @Test(arguments: [
        (PlacementRules(fixedPositions: [], repeatingInterval: 1), "p.repeatingInterval"),
        (PlacementRules(fixedPositions: [], repeatingInterval: 0), "p.repeatingInterval"),
        (PlacementRules(fixedPositions: [3, 3], repeatingInterval: nil), "p.fixedPositions[1]"),
        (PlacementRules(fixedPositions: [4, 2], repeatingInterval: nil), "p.fixedPositions[1]"),
        (PlacementRules(fixedPositions: [-1], repeatingInterval: nil), "p.fixedPositions[0]"),
        (PlacementRules(fixedPositions: [70_000], repeatingInterval: nil), "p.fixedPositions[0]"),
        (PlacementRules(fixedPositions: [], repeatingInterval: 5, maximumAdsPerFeed: 0), "p.maximumAdsPerFeed"),
        (PlacementRules(fixedPositions: [], repeatingInterval: 5, maximumAdsPerFeed: 5_000), "p.maximumAdsPerFeed"),
    ])
    func badRulesNameTheirField(rules: PlacementRules, field: String) {
        do throws(ConfigError) {
            try rules.validate(prefix: "p")
            Issue.record("accepted")
        } catch { #expect(error.field == field) }
    }

    @Test func extremesDoNotTrap() {
        let rules = PlacementRules(fixedPositions: [65_536], repeatingInterval: 2, maximumAdsPerFeed: 4_096)
        #expect(rules.adPositions(in: 0..<10_000_000).count == 4_096)
        #expect(rules.adPositions(in: 9_000_000..<9_000_512).count <= 1)
        #expect(rules.adPositions(in: 5..<5).isEmpty && rules.adPositions(in: -10..<0).isEmpty)
    }

    @Test func separationDistancesAreBounded() {
        var rules = SeparationRules()
        #expect(rules.reach == 10)
        rules.categoryDistance = 0
        #expect(throws: ConfigError.self) { try rules.validate(prefix: "s") }
        rules.categoryDistance = 1_001
        #expect(throws: ConfigError.self) { try rules.validate(prefix: "s") }
        #expect(SeparationRules.none.reach == 0)
    }
}
