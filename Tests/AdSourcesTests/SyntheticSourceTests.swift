import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderTestSupport
import Testing

@testable import AdSources

/// Collects the answers of a source driven by a ManualClock.
private final class Harness {
    let clock = ManualClock()
    let source: SyntheticSource
    var answers: [Result<[DeliveredAd], UpstreamError>] = []

    init(_ configuration: SyntheticSource.Configuration) throws {
        source = try SyntheticSource(configuration: configuration, clock: clock, scheduler: clock)
    }

    func load(_ request: AdRequest = AdRequest(adUnitID: "feed-home"), count: Int = 5) {
        source.loadAds(request, count: count) { self.answers.append($0) }
    }

    /// Issues `requests` loads, one at a time, each answered before the next.
    func loadMany(_ requests: Int, count: Int = 5, request: AdRequest = AdRequest(adUnitID: "feed-home")) {
        for _ in 0..<requests {
            load(request, count: count)
            clock.advance(by: source.configuration.latency + source.configuration.latencyJitter)
        }
    }

    var delivered: [DeliveredAd] { answers.flatMap { (try? $0.get()) ?? [] } }
    /// The native assets delivered (every ad, for a native request).
    var ads: [NativeAdContent] { delivered.compactMap(\.creative.nativeContent) }
    var failures: [UpstreamError] {
        answers.compactMap {
            if case .failure(let error) = $0 { return error }
            return nil
        }
    }
}

private func configuration(
    latency: Duration = .milliseconds(50), fillRate: Double = 1, errorRate: Double = 0, unreachableRate: Double = 0,
    seed: UInt64 = 42
) -> SyntheticSource.Configuration {
    SyntheticSource.Configuration(
        latency: latency, fillRate: fillRate, errorRate: errorRate, unreachableRate: unreachableRate, seed: seed)
}

@Suite struct SyntheticSourceTests {
    @Test func sameSeedReplaysTheSameAnswers() throws {
        let config = configuration(fillRate: 0.7, errorRate: 0.1, seed: 7)
        let first = try Harness(config)
        let second = try Harness(config)
        first.loadMany(50)
        second.loadMany(50)
        #expect(first.answers.count == 50)
        #expect(first.answers == second.answers)
    }

    @Test func differentSeedsGiveDifferentAds() throws {
        let first = try Harness(configuration(seed: 1))
        let second = try Harness(configuration(seed: 2))
        first.loadMany(10)
        second.loadMany(10)
        #expect(first.ads.count == 50)
        #expect(first.ads != second.ads)
    }

    @Test func answersExactlyAtTheLatencyDeadline() throws {
        let harness = try Harness(configuration(latency: .milliseconds(120)))
        harness.load()
        harness.clock.advance(by: .milliseconds(119))
        #expect(harness.answers.isEmpty)
        harness.clock.advance(by: .milliseconds(1))
        #expect(harness.answers.count == 1)
        harness.clock.advance(by: .seconds(10))
        #expect(harness.answers.count == 1, "completion runs exactly once")
    }

    @Test func jitterStaysWithinItsBound() throws {
        var config = configuration(latency: .milliseconds(100), seed: 3)
        config.latencyJitter = .milliseconds(50)
        let harness = try Harness(config)
        var delays: Set<Int64> = []
        for _ in 0..<100 {
            let start = harness.clock.now
            harness.load()
            harness.clock.advance(by: .milliseconds(99))
            #expect(harness.answers.isEmpty)
            while harness.answers.isEmpty, harness.clock.now < start + .milliseconds(150) {
                harness.clock.advance(by: .milliseconds(1))
            }
            #expect(harness.answers.count == 1)
            delays.insert((harness.clock.now - start).milliseconds)
            harness.answers.removeAll()
        }
        #expect(delays.allSatisfy { (100...150).contains($0) })
        #expect(delays.count > 5, "jitter varies the latency")
    }

    @Test(arguments: [Duration.zero, .milliseconds(50)])
    func neverAnswersInsideLoadAds(latency: Duration) throws {
        let harness = try Harness(configuration(latency: latency, errorRate: 0.5))
        for _ in 0..<20 { harness.load() }
        #expect(harness.answers.isEmpty)
        harness.clock.advance(by: latency)
        #expect(harness.answers.count == 20)
    }

    @Test(arguments: 1...5)
    func deliversAtMostTheCountAskedFor(count: Int) throws {
        let full = try Harness(configuration())
        full.loadMany(20, count: count)
        #expect(full.answers.allSatisfy { (try? $0.get())?.count == count })

        let partial = try Harness(configuration(fillRate: 0.5))
        partial.loadMany(200, count: count)
        let sizes = partial.answers.map { (try? $0.get())?.count ?? -1 }
        #expect(sizes.allSatisfy { (0...count).contains($0) })
        #expect(sizes.contains { $0 < count }, "a fill rate of 0.5 gives partial fills")
    }

    @Test(arguments: [0, 6, -1])
    func rejectsCountsOutsideOneToFive(count: Int) throws {
        let harness = try Harness(configuration())
        harness.load(count: count)
        harness.clock.advance(by: .milliseconds(50))
        #expect(harness.failures.map(\.code) == [.final])
    }

    @Test(arguments: [0.0, 0.3, 0.8, 1.0])
    func fillRateIsHonouredOverManyRequests(fillRate: Double) throws {
        let harness = try Harness(configuration(fillRate: fillRate, seed: 11))
        harness.loadMany(400)
        let rate = Double(harness.ads.count) / 2_000
        // 2,000 Bernoulli draws: the standard deviation is at most 0.012, so ±0.06 never flakes.
        #expect(abs(rate - fillRate) <= 0.06, "fill \(rate) for fillRate \(fillRate)")
        #expect(harness.failures.isEmpty)
    }

    @Test func errorAndUnreachableRatesAreHonoured() throws {
        let harness = try Harness(configuration(errorRate: 0.2, unreachableRate: 0.1, seed: 5))
        harness.loadMany(1_000)
        let retryable = harness.failures.filter { $0.code == .retryable }.count
        let unreachable = harness.failures.filter { $0.code == .unreachable }.count
        #expect((140...260).contains(retryable), "\(retryable) retryable of 1000")
        #expect((60...140).contains(unreachable), "\(unreachable) unreachable of 1000")
        #expect(harness.answers.count == 1_000)
    }

    @Test func errorRateOneAlwaysFailsRetryable() throws {
        let harness = try Harness(configuration(errorRate: 1))
        harness.loadMany(20)
        #expect(harness.failures.count == 20)
        #expect(harness.failures.allSatisfy { $0.code == .retryable })
    }

    @Test(arguments: [
        ("fillRate", configuration(fillRate: 1.5)),
        ("fillRate", configuration(fillRate: -0.1)),
        ("fillRate", configuration(fillRate: .nan)),
        ("errorRate", configuration(errorRate: 2)),
        ("unreachableRate", configuration(unreachableRate: -1)),
        ("unreachableRate", configuration(errorRate: 0.6, unreachableRate: 0.6)),
        ("latency", configuration(latency: .milliseconds(-1))),
        ("latencyJitter", SyntheticSource.Configuration(latencyJitter: .seconds(-1))),
    ])
    func validationNamesTheField(field: String, config: SyntheticSource.Configuration) {
        #expect(throws: ConfigError.self) { try config.validate() }
        do {
            try config.validate()
        } catch {
            #expect(error.field == "sources.synthetic.\(field)")
        }
        let clock = ManualClock()
        #expect(throws: ConfigError.self) { try SyntheticSource(configuration: config, clock: clock, scheduler: clock) }
    }

    /// The source module declares its own configuration keys (the daemon's registry composes
    /// them); errors name the configured source's path, as the daemon's did before.
    @Test(arguments: ["sources.synthetic", "sources.feed"])
    func ownKeysAndErrorsNamedUnderTheSourcesPath(path: String) {
        #expect(SyntheticSource.Configuration.typeName == "synthetic")
        let table = SyntheticSource.Configuration.keys
        #expect(table.section == "sources.synthetic")
        #expect(
            table.keys.map(\.key) == ["latency", "latencyJitter", "fillRate", "errorRate", "unreachableRate", "seed"])
        #expect(table.keys.compactMap(\.flag).contains("--synthetic-fill-rate"))
        do {
            try configuration(fillRate: 1.5).validate(field: path)
            Issue.record("a fill rate of 1.5 passed")
        } catch {
            #expect(error.field == "\(path).fillRate")
        }
        #expect(throws: Never.self) { try SyntheticSource.Configuration().validate(field: path) }
    }

    @Test func defaultConfigurationIsValid() throws {
        try SyntheticSource.Configuration().validate()
        #expect(SyntheticSource.Configuration().latency == .milliseconds(50))
    }

    @Test func contentLooksLikeRealAds() throws {
        let harness = try Harness(configuration(seed: 99))
        harness.loadMany(100)
        let ads = harness.ads
        #expect(ads.count == 500)
        for ad in ads {
            #expect(!ad.headline.isEmpty && !ad.headline.contains("{"))
            #expect(!ad.body.isEmpty && !ad.body.contains("{"))
            #expect(!ad.callToAction.isEmpty)
            #expect(!ad.advertiser.isEmpty)
            #expect(ad.icon?.width == 128 && ad.icon?.height == 128)
            #expect(ad.image?.width == 1200 && ad.image?.height == 627)
            let urls =
                [ad.icon?.url, ad.image?.url, ad.clickURL, ad.adChoicesURL].compactMap { $0 }
                + ad.impressionTrackers + ad.clickTrackers
            #expect(urls.count == 6)
            for url in urls {
                #expect(url.hasPrefix("https://") && !url.contains(" "), "\(url)")
                #expect(url.contains(".adloader.invalid/"), "\(url)")
            }
            #expect(ad.icon?.url.hasPrefix(SyntheticSource.cdnBase + "/") == true)
            if let rating = ad.starRating { #expect((0...5).contains(rating)) }
        }
        // Optional fields are sometimes present and sometimes not.
        #expect(ads.contains { $0.starRating == nil } && ads.contains { $0.starRating != nil })
        #expect(ads.contains { $0.price == nil } && ads.contains { $0.price != nil })
        #expect(ads.contains { $0.store == nil } && ads.contains { $0.store != nil })
        // Varied, as real demand is.
        #expect(Set(ads.map(\.headline)).count > 50)
        #expect(Set(ads.map(\.advertiser)).count > 3)
        #expect(Set(ads.map(\.clickURL)).count == ads.count)
    }

    /// A realistic advertiser mix for the feed plan's separation: a few advertisers frequent,
    /// many rare (Zipf-like), each with a domain and an IAB category, the same under a seed.
    @Test func advertisersFollowAZipfLikeMixWithDomainsAndCategories() throws {
        let harness = try Harness(configuration(seed: 7))
        harness.loadMany(400, request: AdRequest(adUnitID: "feed-home", keywords: ["travel"]))
        let delivered = harness.delivered
        #expect(delivered.count == 2000)
        var counts: [String: Int] = [:]
        for ad in delivered {
            let domain = try #require(ad.advertiserDomains.first)
            #expect(ad.advertiserDomains.count == 1 && domain.hasSuffix(".example"))
            #expect(ad.categories.count == 1 && ad.categories[0].hasPrefix("IAB"))
            #expect(ad.creativeID != nil)
            counts[domain, default: 0] += 1
        }
        let sorted = counts.values.sorted(by: >)
        let top3 = sorted.prefix(3).reduce(0, +)
        #expect(Double(top3) / Double(delivered.count) > 0.3, "a few advertisers are frequent: \(sorted.prefix(5))")
        #expect(counts.count >= 60, "many advertisers: \(counts.count)")
        #expect(sorted.filter { $0 <= 20 }.count >= 30, "many are rare (at most 1 %)")
        #expect(Set(delivered.flatMap(\.categories)).count >= 8)
        let again = try Harness(configuration(seed: 7))
        again.loadMany(400, request: AdRequest(adUnitID: "feed-home", keywords: ["travel"]))
        #expect(
            again.delivered.map(\.advertiserDomains) == delivered.map(\.advertiserDomains), "deterministic under a seed"
        )
    }

    @Test func keywordsSteerTheTheme() throws {
        let harness = try Harness(configuration(seed: 8))
        harness.loadMany(40, request: AdRequest(adUnitID: "sidebar", keywords: ["Gaming"]))
        let games = harness.ads.filter { $0.icon?.url.contains("/icons/games/") == true }.count
        #expect(games >= 140, "\(games) of 200 ads are about games")
    }

    @Test func adUnitsHaveTheirOwnStyle() throws {
        func themes(_ adUnitID: String) throws -> [String: Int] {
            let harness = try Harness(configuration(seed: 8))
            harness.loadMany(40, request: AdRequest(adUnitID: adUnitID))
            var counts: [String: Int] = [:]
            for ad in harness.ads {
                let theme = ad.icon?.url.split(separator: "/").dropLast().last.map(String.init) ?? ""
                counts[theme, default: 0] += 1
            }
            return counts
        }
        let units = ["feed-home", "feed-sports", "article-bottom", "search-results", "video-preroll"]
        let dominant = try units.map { try themes($0).max { $0.value < $1.value }!.key }
        #expect(Set(dominant).count > 1, "different ad units lean to different themes: \(dominant)")
    }

    @Test func expandFillsEveryPlaceholderAndCapitalises() {
        var generator = SplitMix64(seed: 1)
        let text = SyntheticSource.expand(
            "{benefit} from {advertiser}: {product} {unknown}", advertiser: "Acme", product: "rocket",
            benefit: "{number} free rides", generator: &generator)
        #expect(!text.contains("{number}"))
        #expect(text.hasSuffix("free rides from Acme: rocket {unknown}"))
        let capitalised = SyntheticSource.expand(
            "{product} now", advertiser: "", product: "tea", benefit: "", generator: &generator)
        #expect(capitalised == "Tea now")
        let sentence = SyntheticSource.expand(
            "Go. {benefit} for {product}.", advertiser: "", product: "tea", benefit: "free cups", generator: &generator)
        #expect(sentence == "Go. Free cups for tea.")
    }

    @Test func splitMixMatchesTheReferenceSequence() {
        // First outputs of SplitMix64 seeded with 0 (reference C implementation by S. Vigna).
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        for _ in 0..<1_000 {
            #expect((0..<7).contains(generator.below(7)))
            #expect((0..<1).contains(generator.unit()))
        }
    }

    // MARK: formats

    @Test func aNativeRequestGetsNativeAdsWithoutASourceExpiry() throws {
        let harness = try Harness(configuration())
        harness.loadMany(4)
        #expect(harness.delivered.count == 20)
        #expect(harness.delivered.allSatisfy { $0.creative.fits(.native) && $0.sourceExpiry == nil })
    }

    @Test(arguments: [AdFormat.interstitial, .appOpen])
    func interstitialAndAppOpenGetHTMLMarkup(format: AdFormat) throws {
        let harness = try Harness(configuration())
        harness.loadMany(20, request: AdRequest(adUnitID: "level-end", format: format))
        let creatives = harness.delivered.compactMap(\.creative.fullScreenCreative)
        #expect(creatives.count == 100)
        #expect(harness.ads.isEmpty)
        for creative in creatives {
            guard case .markup(let html) = creative.media else {
                Issue.record("not markup: \(creative.media)")
                continue
            }
            #expect(html.hasPrefix("<a href=\"https://"))
            #expect(html.contains("\(SyntheticSource.cdnBase)/fullscreen/"))
            #expect(html.contains("width=\"1080\" height=\"1920\""))
            #expect(html.contains("synthetic.adloader.invalid/impression?ad="))
            // Attribute values are escaped: no raw ampersand outside an entity.
            #expect(!html.replacing("&amp;", with: "").contains("&"))
            #expect(creative.orientation == .portrait)
            #expect(creative.width == 1080 && creative.height == 1920)
            #expect(creative.reward == nil)
        }
        #expect(Set(creatives.map(\.media)).count == creatives.count)
    }

    @Test func rewardedGetsAVideoAndAReward() throws {
        let harness = try Harness(configuration())
        harness.loadMany(20, request: AdRequest(adUnitID: "extra-life", format: .rewarded))
        let creatives = harness.delivered.compactMap(\.creative.fullScreenCreative)
        #expect(creatives.count == 100)
        for creative in creatives {
            guard case .videoURL(let url) = creative.media else {
                Issue.record("not a video: \(creative.media)")
                continue
            }
            #expect(url.hasPrefix("\(SyntheticSource.cdnBase)/videos/") && url.hasSuffix("-1080x1920.mp4"))
            #expect(creative.reward?.type == "coins")
            #expect([5, 10, 20, 50].contains(creative.reward?.amount ?? 0))
        }
        #expect(Set(creatives.compactMap(\.reward?.amount)).count > 1)
    }

    @Test func fullScreenAnswersReplayUnderTheSameSeed() throws {
        let request = AdRequest(adUnitID: "level-end", format: .interstitial)
        let first = try Harness(configuration(fillRate: 0.6, seed: 9))
        let second = try Harness(configuration(fillRate: 0.6, seed: 9))
        first.loadMany(10, request: request)
        second.loadMany(10, request: request)
        #expect(!first.delivered.isEmpty)
        #expect(first.answers == second.answers)
    }

    @Test func htmlEscaping() {
        #expect(
            SyntheticSource.escaped(#"Harbor & Pine "Hotels" <now>"#)
                == "Harbor &amp; Pine &quot;Hotels&quot; &lt;now&gt;")
    }
}
