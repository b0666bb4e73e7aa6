import AdLoaderCore
import Testing

@testable import AdLoaderDaemon

/// `loaders.NAME.placement`, `separation.*` and `feeds.*`: our keys, MoPub's JSON verbatim, and
/// a clear error for each bad value.
@Suite struct PlacementConfigurationTests {
    private func loader(_ json: String) throws(ConfigError) -> LoaderConfiguration {
        let file = #"{ "loaders": { "feed": "# + json + " } }"
        let command = try ServerConfiguration.load(arguments: ["--config", "x.json"], environment: [:]) {
            (_) throws(ConfigError) -> String in file
        }
        guard case .run(let configuration) = command, let loader = configuration.loaders.first else {
            throw ConfigError(field: "test", message: "expected a configuration")
        }
        try loader.validate()
        return loader
    }

    private func failure(_ json: String) -> ConfigError? {
        do {
            _ = try loader(json)
            return nil
        } catch { return error }
    }

    @Test func defaultsPlaceAnAdEveryFivePositionsWithSeparation() throws {
        let feed = try loader("{}")
        #expect(feed.placement == PlacementRules(fixedPositions: [], repeatingInterval: 5, maximumAdsPerFeed: 256))
        #expect(feed.separation == SeparationRules())
        #expect(feed.maximumFeeds == 10_000 && feed.feedIdleTimeout == feed.leaseTimeout)
    }

    @Test func ourKeys() throws {
        let feed = try loader(
            #"{ "placement": { "fixedPositions": [4, 1, 4], "repeatingInterval": 6, "maximumAdsPerFeed": 20 },"#
                + #" "separation": { "creative": 30, "advertiserDomain": null, "category": 3, "creativeOncePerFeed": false },"#
                + #" "feeds": { "maximum": 50, "idleTimeout": "60s" } }"#)
        #expect(feed.placement == PlacementRules(fixedPositions: [1, 4], repeatingInterval: 6, maximumAdsPerFeed: 20))
        #expect(
            feed.separation
                == SeparationRules(
                    creativeDistance: 30, advertiserDomainDistance: nil, categoryDistance: 3, creativeOncePerFeed: false
                ))
        #expect(feed.maximumFeeds == 50 && feed.feedIdleTimeout == .seconds(60))
    }

    @Test func moPubsServerPositioningJSONVerbatim() throws {
        let feed = try loader(
            #"{ "placement": {"fixed":[{"section":0,"position":3},{"position":1}],"repeating":{"interval":10}} }"#)
        #expect(
            feed.placement == PlacementRules(fixedPositions: [1, 3], repeatingInterval: 10, maximumAdsPerFeed: 256))
        let fixedOnly = try loader(#"{ "placement": {"fixed":[{"section":0,"position":2}]} }"#)
        #expect(fixedOnly.placement.repeatingInterval == nil, "no repeating key: no repeating ads, as MoPub")
    }

    @Test(arguments: [
        (#"{ "placement": {"repeating":{"interval":1}} }"#, "loaders.feed.placement.repeatingInterval"),
        (#"{ "placement": {"repeatingInterval": 0} }"#, "loaders.feed.placement.repeatingInterval"),
        (#"{ "placement": {"fixed":[{"section":1,"position":2}]} }"#, "loaders.feed.placement.fixed[0].section"),
        (#"{ "placement": {"fixed":[{"section":0}]} }"#, "loaders.feed.placement.fixed[0]"),
        (#"{ "placement": {"fixed":[3]} }"#, "loaders.feed.placement.fixed[0]"),
        (#"{ "placement": {"fixed":[{"position":-2}]} }"#, "loaders.feed.placement.fixedPositions[0]"),
        (#"{ "placement": {"fixed":[], "fixedPositions":[]} }"#, "loaders.feed.placement.fixedPositions"),
        (
            #"{ "placement": {"repeating":{"interval":3}, "repeatingInterval":3} }"#,
            "loaders.feed.placement.repeatingInterval"
        ),
        (#"{ "placement": {"repeating":{"every":3}} }"#, "loaders.feed.placement.repeating.every"),
        (#"{ "placement": {"fixedPosition":[1]} }"#, "loaders.feed.placement.fixedPosition"),
        (#"{ "placement": {"maximumAdsPerFeed": 0} }"#, "loaders.feed.placement.maximumAdsPerFeed"),
        (#"{ "placement": 5 }"#, "loaders.feed.placement"),
        (#"{ "separation": { "category": 0 } }"#, "loaders.feed.separation.category"),
        (#"{ "feeds": { "maximum": 0 } }"#, "loaders.feed.feeds.maximum"),
        (#"{ "leaseTimeout": "60s", "feeds": { "idleTimeout": "120s" } }"#, "loaders.feed.feeds.idleTimeout"),
    ])
    func badValuesNameTheirSetting(json: String, field: String) {
        let error = failure(json)
        #expect(error?.field == field, "\(String(describing: error))")
    }

    @Test func aMisspeltPlacementKeySuggestsTheRightOne() {
        let error = failure(#"{ "placement": {"repeatingIntervall": 4} }"#)
        #expect(error?.message.contains("did you mean \"repeatingInterval\"") == true, "\(String(describing: error))")
    }
}
