import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderService
import AdSources
import Testing

@testable import AdLoaderDaemon
@testable import AdLoaderLogging
@testable import AdLoaderUV

@Suite struct ServerConfigurationTests {
    private func load(
        _ arguments: [String] = [], environment: [String: String] = [:], file: String? = nil
    ) throws(ConfigError) -> ServerConfiguration {
        let command = try ServerConfiguration.load(arguments: arguments, environment: environment) {
            (path) throws(ConfigError) -> String in
            guard let file else { throw ConfigError(field: "config", message: "no file \(path)") }
            return file
        }
        guard case .run(let configuration) = command else {
            throw ConfigError(field: "test", message: "expected a configuration")
        }
        return configuration
    }

    private func error(
        _ arguments: [String] = [], environment: [String: String] = [:], file: String? = nil
    ) -> ConfigError? {
        do {
            _ = try load(arguments, environment: environment, file: file)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaultsServeOneSyntheticLoaderOnLoopbackPort7411() throws {
        let configuration = try load()
        #expect(configuration.listeners.host == "127.0.0.1")
        #expect(configuration.listeners.port == 7411)
        #expect(configuration.listeners.unixSocket == nil)
        #expect(configuration.loaders.map(\.name) == ["default"])
        #expect(configuration.loaders.first?.source == "synthetic")
        #expect(configuration.sources.keys.sorted() == ["synthetic"])
        let limits = configuration.limits
        #expect(limits.maxMessageSize == 4 << 20)
        #expect(limits.maxConnections == 1024)
        #expect(limits.maxCallsInFlightPerConnection == 128)
        #expect(limits.maxParkedBorrows == 10_000)
        #expect(limits.idleTimeout == .seconds(300))
        #expect(limits.partialFrameTimeout == .seconds(10))
        #expect(limits.maxUnsentOutputPerConnection == 1 << 20)
        #expect(limits.shutdownGracePeriod == .seconds(10))
        #expect(limits.maxIdentifierLength == 128)
    }

    @Test func flagsOverrideEnvironmentWhichOverridesTheFile() throws {
        let file =
            #"{ "listeners": { "port": 1000, "host": "::1" }, "limits": { "maxConnections": 5, "idleTimeout": 7 } }"#
        let fromFile = try load(["--config", "x.json"], file: file)
        #expect(fromFile.listeners.port == 1000)
        #expect(fromFile.listeners.host == "::1")
        #expect(fromFile.limits.maxConnections == 5)
        #expect(fromFile.limits.idleTimeout == .seconds(7))
        let environment = ["ADLOADERD_CONFIG": "x.json", "ADLOADERD_PORT": "2000", "ADLOADERD_MAX_CONNECTIONS": "6"]
        let fromEnvironment = try load(environment: environment, file: file)
        #expect(fromEnvironment.listeners.port == 2000)
        #expect(fromEnvironment.limits.maxConnections == 6)
        let fromFlags = try load(["--port=3000", "--max-connections", "7"], environment: environment, file: file)
        #expect(fromFlags.listeners.port == 3000)
        #expect(fromFlags.limits.maxConnections == 7)
        #expect(fromFlags.listeners.host == "::1")
    }

    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("2", .seconds(2)), ("0.5", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
    ])
    func durationsTakeUnits(text: String, expected: Duration) throws {
        #expect(try load(["--idle-timeout", text]).limits.idleTimeout == expected)
    }

    @Test(arguments: [("4MiB", 4 << 20), ("64KiB", 64 << 10), ("1GiB", 1 << 30), ("1000", 1000), ("512B", 512)])
    func sizesTakeUnits(text: String, expected: Int) throws {
        #expect(try load(["--max-message-size", text]).limits.maxMessageSize == expected)
    }

    @Test(arguments: [
        (["--port", "65536"], "listeners.port"),
        (["--port", "http"], "listeners.port"),
        (["--host", "example.com"], "listeners.host"),
        (["--unix-socket-mode", "999"], "listeners.unixSocketMode"),
        (["--log-level", "loud"], "log.level"),
        (["--max-message-size", "8"], "limits.maxMessageSize"),
        (["--max-message-size", "lots"], "limits.maxMessageSize"),
        (["--max-connections", "0"], "limits.maxConnections"),
        (["--max-calls-in-flight", "-1"], "limits.maxCallsInFlightPerConnection"),
        (["--max-parked-borrows", "x"], "limits.maxParkedBorrows"),
        (["--idle-timeout", "0"], "limits.idleTimeout"),
        (["--partial-frame-timeout", "-1s"], "limits.partialFrameTimeout"),
        (["--max-unsent-output", "10"], "limits.maxUnsentOutputPerConnection"),
        (["--shutdown-grace-period", "-1"], "limits.shutdownGracePeriod"),
        (["--max-identifier-length", "0"], "limits.maxIdentifierLength"),
        (["--max-identifier-length", "65537"], "limits.maxIdentifierLength"),
        (["--max-identifier-length", "long"], "limits.maxIdentifierLength"),
        (["--synthetic-error-rate", "1.5"], "sources.synthetic.errorRate"),
        (["--synthetic-latency", "-5ms"], "sources.synthetic.latency"),
        (["--what"], "--what"),
        (["--what=1"], "--what"),
        (["-x"], "-x"),
        (["--port"], "--port"),
        (["stray"], "stray"),
    ])
    func badFlagsNameTheSetting(arguments: [String], setting: String) {
        #expect(error(arguments)?.field == setting)
    }

    @Test func helpWinsWhereverItStandsAfterGoodFlags() throws {
        for arguments in [["--help"], ["-h"], ["--port", "1", "--help", "--what"], ["--config=x.json", "-h"]] {
            guard case .help = try ServerConfiguration.load(arguments: arguments, environment: [:]) else {
                Issue.record("\(arguments): no help")
                continue
            }
        }
        #expect(error(["--what", "--help"])?.field == "--what")
    }

    @Test func aMissingValueOrAStrayArgumentIsNamed() {
        #expect(error(["--port"]) == ConfigError(field: "--port", message: "needs a value"))
        #expect(error(["--config"]) == ConfigError(field: "--config", message: "needs a value"))
        #expect(error(["stray"]) == ConfigError(field: "stray", message: "unexpected argument (see --help)"))
        #expect(error(["--what"]) == ConfigError(field: "--what", message: "unknown option (see --help)"))
    }

    @Test func theJournalCompactionSizeIsReadFromFlagFileOrDefaultAndBoundedBelow() throws {
        #expect(try load().poolStore.journalCompactionSize == 64 << 20)
        #expect(try load(["--pool-store-journal-compaction-size", "8MiB"]).poolStore.journalCompactionSize == 8 << 20)
        let file = #"{"poolStore": {"journalCompactionSize": "256KiB"}}"#
        #expect(try load(["--config", "c.json"], file: file).poolStore.journalCompactionSize == 256 << 10)
        #expect(error(["--pool-store-journal-compaction-size", "1KiB"])?.field == "poolStore.journalCompactionSize")
        let garbage = error(["--pool-store-journal-compaction-size", "lots"])
        #expect(garbage != nil && garbage?.description.contains("compaction") == true, "\(String(describing: garbage))")
    }

    @Test func theConfigFlagTakesEitherForm() throws {
        let file = #"{ "listeners": { "port": 1000 } }"#
        #expect(try load(["--config", "x.json"], file: file).listeners.port == 1000)
        #expect(try load(["--config=x.json"], file: file).listeners.port == 1000)
    }

    @Test func badEnvironmentNamesTheSettingAndTheVariable() {
        let failure = error(environment: ["ADLOADERD_IDLE_TIMEOUT": "forever"])
        #expect(failure?.field == "limits.idleTimeout")
        #expect(failure?.message.contains("ADLOADERD_IDLE_TIMEOUT") == true)
    }

    @Test(arguments: [
        (#"{ "limits": { "maxConections": 5 } }"#, "limits.maxConections"),
        (#"{ "limit": {} }"#, "limit"),
        (#"{ "limits": { "maxConnections": "many" } }"#, "limits.maxConnections"),
        (#"{ "limits": { "maxIdentifierLength": 100000 } }"#, "limits.maxIdentifierLength"),
        (#"{ "loaders": { "feed": { "numberOfAdvertisements": 6 } } }"#, "loaders.feed.numberOfAdvertisements"),
        (#"{ "loaders": { "feed": { "lifetime": true } } }"#, "loaders.feed.lifetime"),
        (#"{ "loaders": { "feed": { "maximumPools": 0 } } }"#, "loaders.feed.maximumPools"),
        (#"{ "loaders": { "feed": { "maximumPools": "all" } } }"#, "loaders.feed.maximumPools"),
        (#"{ "loaders": { "feed": { "retry": { "jitter": 2 } } } }"#, "loaders.feed.retry.jitter"),
        (#"{ "loaders": { "feed": { "source": "nope" } } }"#, "loaders.feed.source"),
        (#"{ "loaders": { "feed": { "keywords": [1] } } }"#, "loaders.feed.keywords[0]"),
        (#"{ "loaders": { "feed": { "colour": "red" } } }"#, "loaders.feed.colour"),
        (#"{ "loaders": { "feed": { "format": "banner" } } }"#, "loaders.feed.format"),
        (#"{ "loaders": { "feed": { "format": "Native" } } }"#, "loaders.feed.format"),
        (#"{ "loaders": { "feed": { "format": 1 } } }"#, "loaders.feed.format"),
        (#"{ "loaders": {} }"#, "loaders"),
        (#"{ "sources": { "slow": { "type": "bidder" } } }"#, "sources.slow.type"),
        (#"{ "sources": { "slow": { "fillRate": -1 } } }"#, "sources.slow.fillRate"),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": 0 } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": -2 } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": 1e300 } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": 1e999 } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (
            #"{ "sources": { "slow": { "maximumRequestsPerSecond": "fast" } } }"#,
            "sources.slow.maximumRequestsPerSecond"
        ),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": true } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (#"{ "sources": { "slow": { "maximumRequestsPerSecond": [] } } }"#, "sources.slow.maximumRequestsPerSecond"),
        (#"{ "loaders": { "feed": { "maximumConcurrentRequests": 0 } } }"#, "loaders.feed.maximumConcurrentRequests"),
        (#"{ "loaders": { "feed": { "maximumConcurrentRequests": -3 } } }"#, "loaders.feed.maximumConcurrentRequests"),
        (
            #"{ "loaders": { "feed": { "maximumConcurrentRequests": 99999999999 } } }"#,
            "loaders.feed.maximumConcurrentRequests"
        ),
        (
            #"{ "loaders": { "feed": { "maximumConcurrentRequests": 1e30 } } }"#,
            "loaders.feed.maximumConcurrentRequests"
        ),
        (#"{ "listeners": { "port": 1 "#, "config"),
        (#"[1]"#, "config"),
    ])
    func badFilesNameTheSetting(file: String, setting: String) {
        #expect(error(["--config", "x.json"], file: file)?.field == setting)
    }

    @Test func fileConfiguresLoadersWithEveryFieldAndNamedSources() throws {
        let file = """
            { "sources": { "slow": { "type": "synthetic", "latency": "2s", "latencyJitter": "100ms", "fillRate": 0.5,
                                     "errorRate": 0.1, "unreachableRate": 0.1, "seed": 42 } },
              "loaders": { "feed": { "source": "slow", "keywords": ["a", "b"], "contentURL": "https://x.test/",
                                     "nonPersonalized": true, "targeting": { "k": "v" }, "numberOfAdvertisements": 3,
                                     "maximumRetainedAdvertisements": 20, "lifetime": "30m", "sweepInterval": 10,
                                     "showCountThreshold": 2, "leaseTimeout": "1m", "maximumBorrowWait": "5s",
                                     "maximumPools": 7, "enabled": false,
                                     "retry": { "delay": 1, "multiplier": 2, "maximumDelay": "1m", "jitter": 0.2,
                                                "maximumCount": 3, "probeInterval": "10s" } } } }
            """
        let configuration = try load(["--config", "x.json"], file: file)
        #expect(configuration.sources["slow"]?.type == "synthetic")
        let source = try #require(configuration.sources["slow"]?.settings(as: SyntheticSource.Configuration.self))
        #expect(source.latency == .seconds(2) && source.latencyJitter == .milliseconds(100))
        #expect(source.fillRate == 0.5 && source.errorRate == 0.1 && source.unreachableRate == 0.1 && source.seed == 42)
        let loader = try #require(configuration.loaders.first)
        #expect(configuration.loaders.count == 1)
        #expect(loader.name == "feed" && loader.source == "slow" && loader.keywords == ["a", "b"])
        #expect(loader.contentURL == "https://x.test/" && loader.nonPersonalized && loader.targeting == ["k": "v"])
        #expect(loader.numberOfAdvertisements == 3 && loader.maximumRetainedAdvertisements == 20)
        #expect(loader.lifetime == .seconds(1800) && loader.sweepInterval == .seconds(10))
        #expect(loader.showCountThreshold == 2 && loader.leaseTimeout == .seconds(60))
        #expect(loader.maximumBorrowWait == .seconds(5) && loader.maximumPools == 7 && !loader.enabled)
        #expect(
            loader.retry.delay == .seconds(1) && loader.retry.multiplier == 2
                && loader.retry.maximumDelay == .seconds(60))
        #expect(
            loader.retry.jitter == 0.2 && loader.retry.maximumCount == 3 && loader.retry.probeInterval == .seconds(10))
    }

    @Test func aSourceOfAnyTypeTakesARequestRateBudget() throws {
        let file = """
            { "sources": { "slow": { "maximumRequestsPerSecond": 2.5, "latency": "2s" },
                           "rtb": { "type": "openrtb", "endpoint": "http://127.0.0.1:1/auction",
                                    "maximumRequestsPerSecond": 40 },
                           "free": { "maximumRequestsPerSecond": null } },
              "loaders": { "feed": { "source": "slow" } } }
            """
        let configuration = try load(["--config", "x.json"], file: file)
        #expect(configuration.sources["slow"]?.common.budget == RequestRateBudget(maximumRequestsPerSecond: 2.5))
        #expect(configuration.sources["slow"]?.settings(as: SyntheticSource.Configuration.self)?.latency == .seconds(2))
        #expect(configuration.sources["rtb"]?.common.maximumRequestsPerSecond == 40)
        #expect(configuration.sources["free"]?.common.budget == nil)
        #expect(configuration.sources["synthetic"]?.common.budget == nil)
    }

    /// Every row of every table, as `--help` shows it.
    static var everyTableSetting: [ConfigSetting] {
        let sections: [[ConfigSetting]] = [
            ServerConfiguration.listenerKeys.settings, ServerConfiguration.logKeys.settings,
            ServerConfiguration.limitKeys.settings, ServerConfiguration.loaderKeys.settings,
            DemandSourceRegistry.standard.types.flatMap(\.settings), DemandSourceConfiguration.commonKeys.settings,
        ]
        return sections.flatMap { $0 }
    }

    @Test func helpListsEveryTableKeyWithItsDefault() throws {
        guard case .help(let text) = try ServerConfiguration.load(arguments: ["--help"], environment: [:]) else {
            Issue.record("no help")
            return
        }
        let lines = text.split(separator: "\n")
        for setting in Self.everyTableSetting {
            if let flag = setting.flag {
                let block = try #require(lines.firstIndex { $0 == "  \(flag) VALUE" }, "no block for \(flag)")
                #expect(lines[block + 1].contains(setting.help))
                #expect(lines[block + 2].contains("default: \(setting.defaultValue); JSON: \(setting.key)"))
                #expect(lines[block + 2].hasSuffix("env \(setting.environment!)"))
            } else {
                // A name can appear in two sections (a loader's and a source's
                // maximumConcurrentRequests): one of its lines shows this default.
                let candidates = lines.filter { $0.hasPrefix("  \(setting.name) ") }
                #expect(
                    candidates.contains { $0.hasSuffix("default: \(setting.defaultValue)") },
                    "\(setting.key): \(candidates)")
            }
        }
        #expect(text.contains("ADLOADERD_CONFIG"))
    }

    /// The flags and variables the README, the end-to-end tests and deployments use.
    @Test func everyFlagKeepsItsKeyAndVariable() {
        let expected: [(String, String, String)] = [
            ("--host", "listeners.host", "ADLOADERD_HOST"), ("--port", "listeners.port", "ADLOADERD_PORT"),
            ("--unix-socket", "listeners.unixSocket", "ADLOADERD_UNIX_SOCKET"),
            ("--unix-socket-mode", "listeners.unixSocketMode", "ADLOADERD_UNIX_SOCKET_MODE"),
            ("--instance-name", "listeners.instanceName", "ADLOADERD_INSTANCE_NAME"),
            ("--log-level", "log.level", "ADLOADERD_LOG_LEVEL"),
            ("--max-message-size", "limits.maxMessageSize", "ADLOADERD_MAX_MESSAGE_SIZE"),
            ("--max-connections", "limits.maxConnections", "ADLOADERD_MAX_CONNECTIONS"),
            ("--max-calls-in-flight", "limits.maxCallsInFlightPerConnection", "ADLOADERD_MAX_CALLS_IN_FLIGHT"),
            ("--max-parked-borrows", "limits.maxParkedBorrows", "ADLOADERD_MAX_PARKED_BORROWS"),
            ("--idle-timeout", "limits.idleTimeout", "ADLOADERD_IDLE_TIMEOUT"),
            ("--partial-frame-timeout", "limits.partialFrameTimeout", "ADLOADERD_PARTIAL_FRAME_TIMEOUT"),
            ("--max-unsent-output", "limits.maxUnsentOutputPerConnection", "ADLOADERD_MAX_UNSENT_OUTPUT"),
            ("--shutdown-grace-period", "limits.shutdownGracePeriod", "ADLOADERD_SHUTDOWN_GRACE_PERIOD"),
            ("--max-identifier-length", "limits.maxIdentifierLength", "ADLOADERD_MAX_IDENTIFIER_LENGTH"),
            ("--synthetic-latency", "sources.synthetic.latency", "ADLOADERD_SYNTHETIC_LATENCY"),
            ("--synthetic-latency-jitter", "sources.synthetic.latencyJitter", "ADLOADERD_SYNTHETIC_LATENCY_JITTER"),
            ("--synthetic-fill-rate", "sources.synthetic.fillRate", "ADLOADERD_SYNTHETIC_FILL_RATE"),
            ("--synthetic-error-rate", "sources.synthetic.errorRate", "ADLOADERD_SYNTHETIC_ERROR_RATE"),
            (
                "--synthetic-unreachable-rate", "sources.synthetic.unreachableRate",
                "ADLOADERD_SYNTHETIC_UNREACHABLE_RATE"
            ),
            ("--synthetic-seed", "sources.synthetic.seed", "ADLOADERD_SYNTHETIC_SEED"),
        ]
        for (flag, key, variable) in expected {
            let setting = ServerConfiguration.settings.first { $0.flag == flag }
            #expect(setting?.key == key, "\(flag)")
            #expect(setting?.environment == variable, "\(flag)")
        }
        #expect(Set(ServerConfiguration.settings.compactMap(\.flag)).isSuperset(of: expected.map(\.0)))
    }

    @Test func helpShowsTheDefaultsTheConfigurationHas() {
        let shown = Dictionary(uniqueKeysWithValues: Self.everyTableSetting.map { ($0.key, $0.defaultValue) })
        #expect(shown["listeners.host"] == "127.0.0.1" && shown["listeners.port"] == "7411")
        #expect(shown["listeners.unixSocket"] == "none" && shown["listeners.unixSocketMode"] == "0660")
        #expect(shown["log.level"] == "info")
        #expect(shown["limits.maxMessageSize"] == "4MiB" && shown["limits.maxUnsentOutputPerConnection"] == "1MiB")
        #expect(shown["limits.idleTimeout"] == "300s" && shown["limits.maxParkedBorrows"] == "10000")
        #expect(shown["limits.maxIdentifierLength"] == "128")
        #expect(shown["loaders.NAME.lifetime"] == "3600s" && shown["loaders.NAME.contentURL"] == "null")
        #expect(shown["loaders.NAME.retry.multiplier"] == "1" && shown["loaders.NAME.keywords"] == "[]")
        #expect(shown["loaders.NAME.format"] == "native")
        #expect(shown["sources.synthetic.latency"] == "50ms" && shown["sources.synthetic.fillRate"] == "1")
    }

    @Test(arguments: [1, 128, 65_536])
    func theIdentifierLimitTakesEveryLengthFromOneTo64KiB(length: Int) throws {
        #expect(try load(["--max-identifier-length", String(length)]).limits.maxIdentifierLength == length)
        let environment = ["ADLOADERD_MAX_IDENTIFIER_LENGTH": String(length)]
        #expect(try load(environment: environment).limits.maxIdentifierLength == length)
        let file = #"{ "limits": { "maxIdentifierLength": \#(length) } }"#
        #expect(try load(["--config", "x.json"], file: file).limits.maxIdentifierLength == length)
    }

    @Test(arguments: [0, -1, 65_537])
    func limitsValidateTheIdentifierLimitWhenBuiltInCode(length: Int) {
        var limits = ServerLimits()
        limits.maxIdentifierLength = length
        #expect(
            throws: ConfigError(field: "limits.maxIdentifierLength", message: "must be 1...65536 bytes, got \(length)")
        ) {
            try limits.validate()
        }
        #expect(
            error(["--max-identifier-length", String(length)])?.message
                == "must be 1...65536, got \(length) (from --max-identifier-length)")
    }

    @Test(arguments: ["native", "interstitial", "rewarded", "appOpen"])
    func aLoaderTakesEveryFormat(format: String) throws {
        let file = #"{ "loaders": { "feed": { "format": "\#(format)" } } }"#
        let loaders = try load(["--config", "x.json"], file: file).loaders
        #expect(loaders.map(\.name) == ["feed"])
        #expect(loaders.first?.format == AdFormat(name: format))
    }

    @Test func aBadFormatListsTheFormats() {
        let failure = error(["--config", "x.json"], file: #"{ "loaders": { "feed": { "format": "video" } } }"#)
        #expect(failure?.message == #"must be native, interstitial, rewarded or appOpen, got "video""#)
    }

    @Test func bannerIsRefusedWithTheReason() {
        let failure = error(["--config", "x.json"], file: #"{ "loaders": { "feed": { "format": "banner" } } }"#)
        #expect(failure?.field == "loaders.feed.format")
        #expect(
            failure?.message.hasPrefix("banner is not a pooled format: banners are shown at once and refreshed") == true
        )
    }

    @Test func appOpenPolicyAndCapStoreSettings() throws {
        let file = #"""
            { "loaders": { "splash": { "format": "appOpen", "appOpen": {
                  "showOnFirstLaunch": false, "backgroundThreshold": "30s", "excludeUnlockReturns": false,
                  "maximumShowsPerSession": 2, "maximumShowsPerDay": 5, "sessionTimeout": "10m" } } },
              "capStore": { "type": "redis", "redisHost": "10.0.0.5", "redisPort": 6380, "outage": "allow",
                            "redisTimeout": "50ms", "redisReconnectInterval": "2s", "redisKeyPrefix": "p" } }
            """#
        let configuration = try load(["--config", "x.json", "--cap-store-synchronous", "full"], file: file)
        let policy = try #require(configuration.loaders.first?.appOpen)
        #expect(!policy.showOnFirstLaunch && !policy.excludeUnlockReturns)
        #expect(policy.backgroundThreshold == .seconds(30) && policy.sessionTimeout == .seconds(600))
        #expect(policy.maximumShowsPerSession == 2 && policy.maximumShowsPerDay == 5)
        let store = configuration.capStore
        #expect(store.type == .redis && store.redisHost == "10.0.0.5" && store.redisPort == 6380)
        #expect(store.outage == .allow && store.redisTimeout == .milliseconds(50) && store.redisKeyPrefix == "p")
        #expect(store.redisReconnectInterval == .seconds(2) && store.sqliteSynchronous == .full)
        // Defaults: unlimited caps, the SQLite store (kill -9 safe), refuse on outage.
        let defaults = try load([])
        #expect(defaults.loaders.first?.appOpen == AppOpenPolicy())
        #expect(defaults.capStore.type == .sqlite && defaults.capStore.sqliteSynchronous == .normal)
        #expect(defaults.capStore.outage == .refuse)
        #expect(
            error(["--cap-store", "mongo"])?.message
                == #"must be sqlite, redis or memory, got "mongo" (from --cap-store)"#)
        #expect(error(["--cap-store-outage", "maybe"])?.field == "capStore.outage")
        #expect(
            error(
                ["--config", "x.json"], file: #"{ "loaders": { "s": { "appOpen": { "maximumShowsPerDay": -1 } } } }"#)?
                .field == "loaders.s.appOpen.maximumShowsPerDay")
    }

    @Test func redisTLSSettingsComeFromFlagsTheFileAndTheEnvironmentAndAreCheckedTogether() throws {
        let flags = try load([
            "--redis-tls", "true", "--redis-tls-ca", "/ca.pem", "--redis-tls-cert", "/c.pem", "--redis-tls-key",
            "/k.pem", "--redis-tls-server-name", "redis.internal",
        ]).capStore
        #expect(flags.redisTLS && flags.redisTLSCAFile == "/ca.pem" && flags.redisTLSServerName == "redis.internal")
        #expect(flags.redisTLSCertificateFile == "/c.pem" && flags.redisTLSKeyFile == "/k.pem")
        let file = try load(
            ["--config", "x.json"], file: #"{ "capStore": { "redisTLS": true, "redisTLSCAFile": "/ca.pem" } }"#
        ).capStore
        #expect(file.redisTLS && file.redisTLSCAFile == "/ca.pem" && file.redisTLSCertificateFile.isEmpty)
        let environment = try load(environment: ["ADLOADERD_REDIS_TLS": "true", "ADLOADERD_REDIS_TLS_CA": "/e.pem"])
        #expect(environment.capStore.redisTLS && environment.capStore.redisTLSCAFile == "/e.pem")
        #expect(try !load().capStore.redisTLS, "off by default")
        // A TLS file with TLS off would be ignored without a word: refused, naming it.
        #expect(error(["--redis-tls-ca", "/ca.pem"])?.field == "capStore.redisTLSCAFile")
        #expect(error(["--redis-tls-server-name", "r"])?.field == "capStore.redisTLSServerName")
        #expect(error(["--redis-tls", "true", "--redis-tls-cert", "/c.pem"])?.field == "capStore.redisTLSKeyFile")
        #expect(
            error(["--redis-tls", "true", "--redis-tls-key", "/k.pem"])?.field == "capStore.redisTLSCertificateFile")
    }

    @Test func theInstanceNameDefaultsToTheBoundAddressAndIsAVisibleASCIIHeaderValue() throws {
        #expect(try load([]).listeners.instanceName == nil)
        #expect(try load(["--instance-name", ""]).listeners.instanceName == nil)
        #expect(try load(["--instance-name", "replica-a"]).listeners.instanceName == "replica-a")
        #expect(
            try load(["--config", "x.json"], file: #"{ "listeners": { "instanceName": "eu-1/b" } }"#).listeners
                .instanceName
                == "eu-1/b")
        #expect(try load([], environment: ["ADLOADERD_INSTANCE_NAME": "c"]).listeners.instanceName == "c")
        for bad in ["two words", "line\nbreak", "caf\u{E9}", String(repeating: "x", count: 256)] {
            #expect(error(["--instance-name", bad])?.field == "listeners.instanceName", "\(bad)")
        }
        #expect(try load(["--instance-name", String(repeating: "x", count: 255)]).listeners.instanceName?.count == 255)
    }

    @Test func aUnixSocketOfNullOrEmptyIsNone() throws {
        #expect(
            try load(["--config", "x.json"], file: #"{ "listeners": { "unixSocket": null } }"#).listeners.unixSocket
                == nil)
        #expect(try load(["--unix-socket", ""]).listeners.unixSocket == nil)
        #expect(try load(["--unix-socket=/tmp/a.sock"]).listeners.unixSocket == "/tmp/a.sock")
    }

    @Test func aRetryThatIsNotAnObjectIsRefusedNamingIt() {
        let failure = error(["--config", "x.json"], file: #"{ "loaders": { "feed": { "retry": 5 } } }"#)
        #expect(failure == ConfigError(field: "loaders.feed.retry", message: "must be an object, got a number"))
        let unknown = error(["--config", "x.json"], file: #"{ "loaders": { "feed": { "retry": { "count": 5 } } } }"#)
        #expect(unknown == ConfigError(field: "loaders.feed.retry.count", message: "unknown setting"))
    }

    @Test func aBadLoaderSettingIsNamedWithItsRange() {
        let failure = error(
            ["--config", "x.json"], file: #"{ "loaders": { "default": { "numberOfAdvertisements": 7 } } }"#)
        #expect(failure?.description == "loaders.default.numberOfAdvertisements: must be 1...5, got 7")
    }

    @Test func aJSONSyntaxErrorNamesTheFileLineAndColumn() {
        let file = "{\n  \"loaders\": {\n    \"feed\": { \"lifetime\": 30s }\n  }\n}\n"
        let failure = error(["--config", "x.json"], file: file)
        #expect(failure?.field == "config")
        #expect(failure?.message.hasPrefix("x.json:3:29: invalid JSON: ") == true, "\(String(describing: failure))")
    }

    @Test func aColumnCountsCharactersNotBytesAndACRLFIsOneLineEnd() throws {
        let file = "{\r\n  \"caf\u{E9}\": \"\u{E9}\u{E9}\", !\r\n}"
        let failure = error(["--config", "x.json"], file: file)
        #expect(failure?.message.hasPrefix("x.json:2:17: invalid JSON: ") == true, "\(String(describing: failure))")
    }

    @Test(arguments: [
        (#"{ "loaders": { "feed": { "lifetme": "30s" } } }"#, "loaders.feed.lifetme", "lifetime"),
        (#"{ "loaders": { "feed": { "retry": { "dealy": "1s" } } } }"#, "loaders.feed.retry.dealy", "delay"),
        (
            #"{ "loaders": { "feed": { "retry": { "maximumcount": 3 } } } }"#, "loaders.feed.retry.maximumcount",
            "maximumCount"
        ),
        (#"{ "limit": {} }"#, "limit", "limits"),
        (#"{ "sources": { "s": { "type": "synthetc" } } }"#, "sources.s.type", "synthetic"),
        (#"{ "sources": { "s": { "type": "synthetic", "errorRat": 1 } } }"#, "sources.s.errorRat", "errorRate"),
    ])
    func anUnknownKeySuggestsTheNearestKnownOne(file: String, field: String, suggestion: String) {
        let failure = error(["--config", "x.json"], file: file)
        #expect(failure?.field == field)
        #expect(
            failure?.message.contains("(did you mean \"\(suggestion)\"?)") == true, "\(String(describing: failure))")
    }

    @Test(arguments: [
        ("interstitial", "interstitialMedia"), ("rewarded", "rewardedMedia"), ("appOpen", "appOpenMedia"),
    ])
    func aFullScreenLoaderOnAnOpenRTBSourceThatCannotRequestItIsRefusedNamingTheKeys(format: String, key: String) {
        let served = """
            { "sources": { "rtb": { "type": "openrtb", "endpoint": "http://127.0.0.1:9/a" } },
              "loaders": { "full": { "source": "rtb", "format": "\(format)" } } }
            """
        #expect(error(["--config", "x.json"], file: served) == nil)
        let file = """
            { "sources": { "rtb": { "type": "openrtb", "endpoint": "http://127.0.0.1:9/a", "\(key)": [] } },
              "loaders": { "full": { "source": "rtb", "format": "\(format)" } } }
            """
        let failure = error(["--config", "x.json"], file: file)
        #expect(failure?.field == "loaders.full.format")
        #expect(
            failure?.message.hasPrefix("is \(format), but its source \"rtb\" (type openrtb) delivers only ") == true)
        #expect(failure?.message.contains("sources.rtb.\(key)") == true, "\(String(describing: failure))")
        let native =
            #"{ "sources": { "rtb": { "type": "openrtb", "endpoint": "http://127.0.0.1:9/a" } }, "loaders": { "n": { "source": "rtb" } } }"#
        #expect(error(["--config", "x.json"], file: native) == nil)
    }

    @Test func aKeyFarFromEveryKnownOneGetsNoSuggestion() {
        let failure = error(["--config", "x.json"], file: #"{ "loaders": { "feed": { "retry": { "count": 5 } } } }"#)
        #expect(failure == ConfigError(field: "loaders.feed.retry.count", message: "unknown setting"))
        #expect(error(["--config", "x.json"], file: #"{ "zzzzzz": 1 }"#)?.message.contains("did you mean") == false)
    }

    @Test func aMisspeltFlagSuggestsTheFlag() {
        let failure = error(["--admin-prot", "7412"])
        #expect(failure?.field == "--admin-prot")
        #expect(failure?.message == "unknown option (did you mean \"--admin-port\"?) (see --help)")
    }

    @Test func aLoaderNamingAMisspeltSourceSuggestsIt() {
        let file =
            #"{ "sources": { "exchange": { "type": "synthetic" } }, "loaders": { "feed": { "source": "exchang" } } }"#
        #expect(error(["--config", "x.json"], file: file)?.message.contains("(did you mean \"exchange\"?)") == true)
    }

    @Test(arguments: [
        ("lifetme", "lifetime", 1), ("dealy", "delay", 1), ("abc", "abc", 0), ("", "ab", 2), ("kitten", "sitting", 3),
    ])
    func editDistanceCountsASwapAsOneEdit(a: String, b: String, distance: Int) {
        #expect(Suggestion.editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars)) == distance)
    }
}
