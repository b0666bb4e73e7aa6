import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderOpenRTB
import AdLoaderTestSupport
import AdSources
import Testing

@testable import AdLoaderDaemon

/// A source type only these tests know: every answer is `count` ads headlined `headline`. Its
/// settings declare their own keys (``SourceSettings``), as a source module does.
private struct FixedSourceType: DemandSourceType {
    struct Settings: SourceSettings {
        var headline = "fixed"
        var count = 1

        static var typeName: String { "fixed" }
        static var summary: String { "answers every request with the same ads" }
        static var keys: ConfigTable<Settings> {
            ConfigTable(
                section: "sources.fixed", defaults: Settings(),
                keys: [
                    .value("headline", \.headline, .string, flag: "--fixed-headline", "headline of every ad"),
                    .value("count", \.count, .int(), "ads per answer, 0...5"),
                ])
        }

        func validate(field: String) throws(ConfigError) {
            if !(0...5).contains(count) {
                throw ConfigError(field: "\(field).count", message: "must be 0...5, got \(count)")
            }
        }
    }

    func makeSource(_ settings: Settings, context: DemandSourceContext) throws -> any DemandSource {
        FixedSource(settings: settings, clock: context.clock, scheduler: context.scheduler)
    }
}

private final class FixedSource: DemandSource {
    let settings: FixedSourceType.Settings
    let clock: any AdClock
    let scheduler: any AdScheduler

    init(settings: FixedSourceType.Settings, clock: any AdClock, scheduler: any AdScheduler) {
        self.settings = settings
        self.clock = clock
        self.scheduler = scheduler
    }

    func loadAds(
        _ request: AdRequest, count: Int, completion: @escaping (Result<[DeliveredAd], UpstreamError>) -> Void
    ) {
        let ad = DeliveredAd(creative: .native(NativeAdContent(headline: settings.headline)))
        let ads = Array(repeating: ad, count: settings.count)
        _ = scheduler.schedule(at: clock.now) { completion(.success(ads)) }
    }
}

@Suite struct DemandSourceRegistryTests {
    private let registry = DemandSourceRegistry(types: [SyntheticSourceType(), FixedSourceType()])

    private func load(
        _ arguments: [String] = [], environment: [String: String] = [:], file: String
    ) throws(ConfigError) -> ServerConfiguration {
        let command = try ServerConfiguration.load(
            arguments: ["--config", "x.json"] + arguments, environment: environment,
            readFile: { (_) throws(ConfigError) -> String in file }, sourceTypes: registry)
        guard case .run(let configuration) = command else { throw ConfigError(field: "test", message: "no run") }
        return configuration
    }

    private func error(_ arguments: [String] = [], file: String) -> ConfigError? {
        do {
            _ = try load(arguments, file: file)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSourceWithoutTypeIsSynthetic() throws {
        let configuration = try load(file: #"{ "sources": { "slow": { "latency": "2s" } } }"#)
        #expect(configuration.sources["slow"]?.type == "synthetic")
        let settings = configuration.sources["slow"]?.settings(as: SyntheticSource.Configuration.self)
        #expect(settings?.latency == .seconds(2))
        #expect(configuration.sources["synthetic"] == .synthetic(), "the built-in source stays")
    }

    @Test func eachTypeDecodesItsOwnKeysAndTheServerBuildsItThroughTheFactory() throws {
        let configuration = try load(
            file: #"{ "sources": { "house": { "type": "fixed", "headline": "Our own", "count": 2 } } }"#)
        let source = try #require(configuration.sources["house"])
        #expect(source.type == "fixed")
        #expect(
            source.settings(as: FixedSourceType.Settings.self)
                == FixedSourceType.Settings(headline: "Our own", count: 2))
        let clock = ManualClock()
        let built = try source.makeSource(clock: clock, scheduler: clock)
        var answer: [DeliveredAd] = []
        built.loadAds(AdRequest(adUnitID: "u"), count: 5) { answer = (try? $0.get()) ?? [] }
        clock.advance(by: .milliseconds(1))
        #expect(answer.map(\.creative.nativeContent?.headline) == ["Our own", "Our own"])
    }

    @Test func aTypesFlagConfiguresTheSourceNamedAfterIt() throws {
        let configuration = try load(["--fixed-headline", "From a flag"], file: "{}")
        let settings = configuration.sources["fixed"]?.settings(as: FixedSourceType.Settings.self)
        #expect(settings == FixedSourceType.Settings(headline: "From a flag", count: 1))
        let fromEnvironment = try load(environment: ["ADLOADERD_FIXED_HEADLINE": "From env"], file: "{}")
        #expect(fromEnvironment.sources["fixed"]?.settings(as: FixedSourceType.Settings.self)?.headline == "From env")
    }

    @Test func aFlagForASourceOfAnotherTypeIsRefused() {
        let failure = error(
            ["--synthetic-latency", "5ms"], file: #"{ "sources": { "synthetic": { "type": "fixed" } } }"#)
        #expect(failure?.field == "sources.synthetic.type")
        #expect(failure?.message.contains("--synthetic-latency") == true)
    }

    @Test func aFileSourceOfTheSameNameButAnotherTypeReplacesTheBuiltIn() throws {
        let configuration = try load(file: #"{ "sources": { "synthetic": { "type": "fixed", "count": 0 } } }"#)
        #expect(configuration.sources["synthetic"]?.type == "fixed")
    }

    @Test func anUnknownTypeIsNamedWithTheKnownOnes() {
        let failure = error(file: #"{ "sources": { "exchange": { "type": "openrtb" } } }"#)
        #expect(
            failure
                == ConfigError(
                    field: "sources.exchange.type", message: "unknown source type \"openrtb\" (known: synthetic, fixed)"
                ))
        #expect(error(file: #"{ "sources": { "exchange": { "type": 3 } } }"#)?.field == "sources.exchange.type")
    }

    @Test(arguments: [
        (#"{ "sources": { "house": { "type": "fixed", "fillRate": 1 } } }"#, "sources.house.fillRate"),
        (#"{ "sources": { "house": { "type": "fixed", "count": 9 } } }"#, "sources.house.count"),
        (#"{ "sources": { "house": { "type": "fixed", "count": "two" } } }"#, "sources.house.count"),
        (#"{ "sources": { "slow": { "headline": "x" } } }"#, "sources.slow.headline"),
        (#"{ "sources": { "slow": { "fillRate": 2 } } }"#, "sources.slow.fillRate"),
        (#"{ "sources": { "slow": [] } }"#, "sources.slow"),
    ])
    func eachTypeValidatesItsOwnSettings(file: String, field: String) {
        #expect(error(file: file)?.field == field)
    }

    @Test func helpListsEveryTypeWithItsRows() throws {
        guard
            case .help(let text) = try ServerConfiguration.load(
                arguments: ["--help"], environment: [:], sourceTypes: registry)
        else {
            Issue.record("no help")
            return
        }
        #expect(text.contains("type \"fixed\": answers every request with the same ads"))
        #expect(
            text.contains(
                "  --fixed-headline VALUE\n      headline of every ad\n      default: fixed; JSON: sources.fixed.headline  env ADLOADERD_FIXED_HEADLINE\n"
            ))
        #expect(text.contains("  count  "))
        #expect(text.contains("a source without \"type\" is\nof type \"synthetic\""))
    }

    @Test func theStandardRegistryHasTheSyntheticAndOpenRTBTypes() {
        #expect(DemandSourceRegistry.standard.types.map(\.name) == ["synthetic", "openrtb"])
        #expect(DemandSourceRegistry.defaultTypeName == "synthetic")
    }

    @Test func openrtbSourcesDecodeValidateAndNeedTheLoop() throws {
        func load(file: String) throws(ConfigError) -> ServerConfiguration {
            let command = try ServerConfiguration.load(
                arguments: ["--config", "x.json"], environment: [:],
                readFile: { (_) throws(ConfigError) -> String in file }, sourceTypes: .standard)
            guard case .run(let configuration) = command else { throw ConfigError(field: "test", message: "no run") }
            return configuration
        }
        let configuration = try load(
            file:
                #"{ "sources": { "pbs": { "type": "openrtb", "endpoint": "https://pbs.example/openrtb2/auction", "tmax": "300ms", "deviceOS": "ios" } } }"#
        )
        let source = try #require(configuration.sources["pbs"])
        let settings = try #require(source.settings(as: OpenRTBSource.Configuration.self))
        #expect(settings.endpoint == "https://pbs.example/openrtb2/auction")
        #expect(settings.tmax == .milliseconds(300))
        #expect(settings.deviceOS == "ios")
        // The regulation fields moved to the loaders' consent classes; identifiers are gone.
        for (key, value) in [("usPrivacy", #""1YNN""#), ("userID", #""u""#), ("gdpr", "true")] {
            #expect {
                try load(file: #"{ "sources": { "pbs": { "type": "openrtb", "\#(key)": \#(value) } } }"#)
            } throws: { error in
                (error as? ConfigError)?.field == "sources.pbs.\(key)"
                    && (error as? ConfigError)?.message.hasPrefix("no longer a setting here") == true
            }
        }
        let clock = ManualClock()
        #expect(throws: ConfigError.self) { try source.makeSource(clock: clock, scheduler: clock) }
        #expect(
            throws: ConfigError(
                field: "sources.pbs.endpoint", message: "must be an http:// or https:// URL, got \"nope\"")
        ) {
            try load(file: #"{ "sources": { "pbs": { "type": "openrtb", "endpoint": "nope" } } }"#)
        }
    }

    @Test func helpListsEveryOpenRTBSettingWithItsDefault() {
        let text = ServerConfiguration.helpText
        let keys = OpenRTBSourceType().keys.keys
        #expect(keys.count >= 23)
        for row in keys {
            let shown = row.show(OpenRTBSource.Configuration())
            #expect(!shown.isEmpty, "\(row.key) has a visible default")
            let listed = text.contains("JSON: sources.openrtb.\(row.key) ") || text.contains("  \(row.key) ")
            #expect(listed, "\(row.key) in --help")
            #expect(text.contains("default: \(shown)"), "\(row.key) default \(shown)")
        }
        #expect(text.contains("--openrtb-endpoint"))
    }
}
