public import AdLoaderCore

/// The embedded demand source: invents realistic native ads, with configurable latency, fill
/// rate and error rate, deterministic under a seed; for a full-screen format
/// (``AdRequest/format``), simple full-screen creatives of the same themes.
///
/// Use it for `make run`, demos, tests and load tests: it needs no network. The theme of the
/// ads (travel, finance, games, ...) follows the request's keywords when one matches, and
/// otherwise the ad unit id, so one ad unit keeps a recognisable style. All URLs point at the
/// reserved `.invalid` domain and never resolve.
///
/// Every random choice is drawn from one seeded generator when `loadAds` is called, so the
/// same seed and the same sequence of calls produce the same answers, whatever the latency.
///
/// - Important: confined to the loader's thread, like every ``DemandSource``; answers always
///   arrive through the scheduler, never from inside `loadAds`.
public final class SyntheticSource: DemandSource {
    /// How the synthetic source behaves; check it with ``validate()`` before use.
    public struct Configuration: Hashable, Sendable {
        /// The prefix of this configuration's setting names in errors.
        public static let fieldPrefix = "sources.synthetic"

        /// Time from a request to its answer.
        public var latency: Duration = .milliseconds(50)
        /// Extra latency drawn uniformly from `0...latencyJitter` per request; zero for none.
        public var latencyJitter: Duration = .zero
        /// Probability, 0...1, that each ad asked for is delivered (the rest are a partial fill).
        public var fillRate: Double = 1
        /// Probability, 0...1, that a request fails with a retryable error.
        public var errorRate: Double = 0
        /// Probability, 0...1, that a request fails as unreachable; `errorRate + unreachableRate`
        /// must not exceed 1.
        public var unreachableRate: Double = 0
        /// Seeds the generator: the same seed replays the same ads, fills and failures.
        public var seed: UInt64 = 0

        public init(
            latency: Duration = .milliseconds(50), latencyJitter: Duration = .zero, fillRate: Double = 1,
            errorRate: Double = 0, unreachableRate: Double = 0, seed: UInt64 = 0
        ) {
            self.latency = latency
            self.latencyJitter = latencyJitter
            self.fillRate = fillRate
            self.errorRate = errorRate
            self.unreachableRate = unreachableRate
            self.seed = seed
        }

        /// Checks every field; the error names the first one out of range.
        /// - Throws: ``ConfigError`` with `field` such as `sources.synthetic.fillRate`.
        public func validate() throws(ConfigError) {
            func fail(_ field: String, _ message: String) -> ConfigError {
                ConfigError(field: "\(Self.fieldPrefix).\(field)", message: message)
            }
            if latency < .zero { throw fail("latency", "must not be negative") }
            if latencyJitter < .zero { throw fail("latencyJitter", "must not be negative") }
            for (field, value) in [
                ("fillRate", fillRate), ("errorRate", errorRate), ("unreachableRate", unreachableRate),
            ]
            where !(0...1).contains(value) {
                throw fail(field, "must be 0...1, got \(value)")
            }
            if errorRate + unreachableRate > 1 {
                throw fail("unreachableRate", "errorRate + unreachableRate must not exceed 1")
            }
        }
    }

    /// The most ads one request may ask for, as in ``LoaderConfiguration/numberOfAdvertisements``.
    public static let maximumCount = 5
    /// Where icons and images live; a reserved domain that never resolves.
    public static let cdnBase = "https://cdn.synthetic.adloader.invalid"
    static let trackerBase = "https://track.synthetic.adloader.invalid"
    static let adChoicesURL = "https://synthetic.adloader.invalid/adchoices"

    public let configuration: Configuration
    private let clock: any AdClock
    private let scheduler: any AdScheduler
    private var generator: SplitMix64

    /// Creates a source answering on `scheduler` after the configured latency.
    /// - Parameters:
    ///   - configuration: latency, fill and error rates, seed.
    ///   - clock: reads "now" to place each answer's deadline.
    ///   - scheduler: runs each answer; the loader's own scheduler.
    /// - Throws: ``ConfigError`` when `configuration` does not validate.
    public init(
        configuration: Configuration = Configuration(), clock: any AdClock, scheduler: any AdScheduler
    ) throws(ConfigError) {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        self.scheduler = scheduler
        self.generator = SplitMix64(seed: configuration.seed)
    }

    /// Asks for `count` ads; `completion` runs once, through the scheduler, after the latency.
    ///
    /// The answer holds 0...`count` ads (each delivered with probability `fillRate`), or a
    /// retryable or unreachable ``UpstreamError`` at the configured rates. A `count` outside
    /// 1...5 fails with a final error. Ads are native for ``AdFormat/native``, else
    /// full-screen: HTML markup for interstitial and app-open, a video with a reward for rewarded.
    public func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        let result = decide(request, count: count)
        let deadline = clock.now + configuration.latency + jitter()
        _ = scheduler.schedule(at: deadline) { completion(result) }
    }

    /// Draws the whole answer now, so the sequence of draws depends only on the sequence of calls.
    private func decide(_ request: AdRequest, count: Int) -> Result<[DeliveredAd], UpstreamError> {
        guard (1...Self.maximumCount).contains(count) else {
            return .failure(UpstreamError(code: .final, message: "synthetic: count must be 1...5, got \(count)"))
        }
        let failure = generator.unit()
        if failure < configuration.unreachableRate {
            return .failure(UpstreamError(code: .unreachable, message: "synthetic: simulated network unreachable"))
        }
        if failure < configuration.unreachableRate + configuration.errorRate {
            return .failure(UpstreamError(code: .retryable, message: "synthetic: simulated upstream error 503"))
        }
        var ads: [DeliveredAd] = []
        for _ in 0..<count where generator.chance(configuration.fillRate) {
            if request.format.isFullScreen {
                ads.append(DeliveredAd(creative: .fullScreen(makeFullScreen(for: request))))
            } else {
                let (content, advertiser) = makeAd(for: request)
                ads.append(
                    DeliveredAd(
                        creative: .native(content), creativeID: Self.creativeID(of: content),
                        advertiserDomains: [advertiser.domain], categories: [advertiser.category]))
            }
        }
        return .success(ads)
    }

    private func jitter() -> Duration {
        let maximum = configuration.latencyJitter.milliseconds
        guard maximum > 0 else { return .zero }
        return .milliseconds(Int64(generator.below(Int(maximum) + 1)))
    }

    /// The theme of the next ad, and its index in ``SyntheticCatalog/themes``.
    private func theme(for request: AdRequest) -> (SyntheticCatalog.Theme, Int) {
        let themes = SyntheticCatalog.themes
        let wanted = Set(request.keywords.map { $0.lowercased() })
        let matching = themes.indices.filter { !wanted.isDisjoint(with: themes[$0].keywords) }
        // Mostly on topic, with some variety as real demand has.
        let index: Int
        if !matching.isEmpty, generator.chance(0.85) {
            index = generator.pick(matching)
        } else if generator.chance(0.7) {
            index = Int(Self.stableHash(request.adUnitID) % UInt64(themes.count))
        } else {
            index = generator.below(themes.count)
        }
        return (themes[index], index)
    }

    /// The creative id of a synthetic native ad: its image asset ("THEME/ADVERTISER-N", one of
    /// 40 per advertiser), as an exchange's `crid` names the creative whatever the text.
    static func creativeID(of content: NativeAdContent) -> String? {
        guard let url = content.image?.url, url.hasPrefix(cdnBase + "/images/") else { return nil }
        var id = url.dropFirst(cdnBase.count + "/images/".count)
        if let dash = id.lastIndex(of: "-") { id = id[..<dash] }
        return String(id)
    }

    private func makeAd(for request: AdRequest) -> (NativeAdContent, SyntheticAdvertisers.Advertiser) {
        let (theme, themeIndex) = theme(for: request)
        let ranked = SyntheticAdvertisers.byTheme[themeIndex][SyntheticAdvertisers.rank(for: generator.unit())]
        let advertiser = ranked.name
        let product = generator.pick(theme.products)
        let benefit = generator.pick(theme.benefits)
        let fill = { (template: String, generator: inout SplitMix64) -> String in
            Self.expand(template, advertiser: advertiser, product: product, benefit: benefit, generator: &generator)
        }
        let headline = fill(generator.pick(theme.headlines), &generator)
        let body = fill(generator.pick(theme.bodies), &generator)
        let token = Self.hex(generator.next())
        let creative = generator.below(40) + 1
        let slug = Self.slug(advertiser)

        let isApp = generator.chance(theme.appShare)
        let store: String? = isApp ? generator.pick(SyntheticCatalog.stores) : nil
        let price: String?
        let starRating: Double?
        if isApp {
            price = generator.chance(0.8) ? generator.pick(SyntheticCatalog.appPrices) : nil
            // 3.0...5.0 in tenths; some apps are not rated yet.
            starRating = generator.chance(0.85) ? Double(30 + generator.below(21)) / 10 : nil
        } else {
            price = !theme.webPrices.isEmpty && generator.chance(0.5) ? generator.pick(theme.webPrices) : nil
            starRating = generator.chance(0.3) ? Double(35 + generator.below(16)) / 10 : nil
        }
        let callToAction = isApp && generator.chance(0.5) ? "Install" : generator.pick(theme.callsToAction)

        let content = NativeAdContent(
            headline: headline, body: body, callToAction: callToAction, advertiser: advertiser,
            icon: AdImage(
                url: "\(Self.cdnBase)/icons/\(theme.name)/\(slug)-\(creative)-128x128.png", width: 128, height: 128),
            image: AdImage(
                url: "\(Self.cdnBase)/images/\(theme.name)/\(slug)-\(creative)-1200x627.jpg", width: 1200, height: 627),
            starRating: starRating, price: price, store: store,
            clickURL: "https://\(slug).synthetic.adloader.invalid/landing?creative=\(creative)&click=\(token)",
            impressionTrackers: ["\(Self.trackerBase)/impression?ad=\(token)"],
            clickTrackers: ["\(Self.trackerBase)/click?ad=\(token)"],
            adChoicesURL: Self.adChoicesURL)
        return (content, ranked)
    }

    /// A full-screen creative of the request's theme: portrait 1080x1920, HTML markup (an
    /// image linking to the landing page, with an impression pixel) for interstitial and
    /// app-open, a video and a reward of coins for rewarded.
    private func makeFullScreen(for request: AdRequest) -> FullScreenCreative {
        let (theme, _) = theme(for: request)
        let advertiser = generator.pick(theme.advertisers)
        let product = generator.pick(theme.products)
        let benefit = generator.pick(theme.benefits)
        let headline = Self.expand(
            generator.pick(theme.headlines), advertiser: advertiser, product: product, benefit: benefit,
            generator: &generator)
        let token = Self.hex(generator.next())
        let creative = generator.below(40) + 1
        let slug = Self.slug(advertiser)
        let asset = "\(theme.name)/\(slug)-\(creative)-1080x1920"
        if request.format == .rewarded {
            return FullScreenCreative(
                media: .videoURL("\(Self.cdnBase)/videos/\(asset).mp4"), orientation: .portrait, width: 1080,
                height: 1920, reward: FullScreenCreative.Reward(type: "coins", amount: generator.pick([5, 10, 20, 50])))
        }
        let landing = "https://\(slug).synthetic.adloader.invalid/landing?creative=\(creative)&click=\(token)"
        let markup = """
            <a href="\(Self.escaped(landing))"><img src="\(Self.cdnBase)/fullscreen/\(asset).jpg" \
            width="1080" height="1920" alt="\(Self.escaped(headline))"></a>\
            <img src="\(Self.trackerBase)/impression?ad=\(token)" width="1" height="1" alt="">
            """
        return FullScreenCreative(media: .markup(markup), orientation: .portrait, width: 1080, height: 1920)
    }

    /// `text` safe inside a double-quoted HTML attribute.
    static func escaped(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            default: output.append(character)
            }
        }
        return output
    }

    /// Replaces `{advertiser}`, `{product}`, `{benefit}` and `{number}`, capitalising a value
    /// that starts a sentence. Benefits may hold `{number}` themselves.
    static func expand(
        _ template: String, advertiser: String, product: String, benefit: String, generator: inout SplitMix64
    ) -> String {
        substitute(template, advertiser: advertiser, product: product, benefit: benefit, generator: &generator)
    }

    private static func substitute(
        _ template: String, advertiser: String, product: String, benefit: String, generator: inout SplitMix64
    ) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            let value: String
            switch rest[rest.index(after: open)..<close] {
            case "advertiser": value = advertiser
            case "product": value = product
            case "benefit":
                value = substitute(
                    benefit, advertiser: advertiser, product: product, benefit: "", generator: &generator)
            case "number": value = String(generator.pick(SyntheticCatalog.numbers))
            default: value = String(rest[open...close])
            }
            // A value that starts a sentence starts with a capital.
            if output.isEmpty || output.hasSuffix(". "), let first = value.first, first.isLowercase {
                output += first.uppercased() + value.dropFirst()
            } else {
                output += value
            }
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output
    }

    /// FNV-1a over UTF-8: stable across runs and platforms, unlike `Hasher`.
    static func stableHash(_ string: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in string.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// Lowercase letters and digits of `name`, e.g. "Harbor & Pine Hotels" -> "harborpinehotels".
    static func slug(_ name: String) -> String {
        String(
            name.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.map(
                Character.init))
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
