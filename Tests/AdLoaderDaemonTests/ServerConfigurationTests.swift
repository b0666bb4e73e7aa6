import AdLoaderCore
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
        #expect(limits.maxUnsentOutputPerConnection == 8 << 20)
        #expect(limits.shutdownGracePeriod == .seconds(10))
    }

    @Test func flagsOverrideEnvironmentWhichOverridesTheFile() throws {
        let file = #"{ "listeners": { "port": 1000, "host": "::1" }, "limits": { "maxConnections": 5, "idleTimeout": 7 } }"#
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
        (["--synthetic-error-rate", "1.5"], "sources.synthetic.errorRate"),
        (["--synthetic-latency", "-5ms"], "sources.synthetic.latency"),
        (["--what"], "--what"),
        (["--port"], "--port"),
        (["stray"], "stray"),
    ])
    func badFlagsNameTheSetting(arguments: [String], setting: String) {
        #expect(error(arguments)?.field == setting)
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
        (#"{ "loaders": { "feed": { "numberOfAdvertisements": 6 } } }"#, "loaders.feed.numberOfAdvertisements"),
        (#"{ "loaders": { "feed": { "lifetime": true } } }"#, "loaders.feed.lifetime"),
        (#"{ "loaders": { "feed": { "maximumPools": 0 } } }"#, "loaders.feed.maximumPools"),
        (#"{ "loaders": { "feed": { "maximumPools": "all" } } }"#, "loaders.feed.maximumPools"),
        (#"{ "loaders": { "feed": { "retry": { "jitter": 2 } } } }"#, "loaders.feed.retry.jitter"),
        (#"{ "loaders": { "feed": { "source": "nope" } } }"#, "loaders.feed.source"),
        (#"{ "loaders": { "feed": { "keywords": [1] } } }"#, "loaders.feed.keywords[0]"),
        (#"{ "loaders": { "feed": { "colour": "red" } } }"#, "loaders.feed.colour"),
        (#"{ "loaders": {} }"#, "loaders"),
        (#"{ "sources": { "slow": { "type": "openrtb" } } }"#, "sources.slow.type"),
        (#"{ "sources": { "slow": { "fillRate": -1 } } }"#, "sources.slow.fillRate"),
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
        let source = try #require(configuration.sources["slow"])
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
        #expect(loader.retry.delay == .seconds(1) && loader.retry.multiplier == 2 && loader.retry.maximumDelay == .seconds(60))
        #expect(loader.retry.jitter == 0.2 && loader.retry.maximumCount == 3 && loader.retry.probeInterval == .seconds(10))
    }

    @Test func helpListsEverySettingWithItsDefault() throws {
        guard case .help(let text) = try ServerConfiguration.load(arguments: ["--help"], environment: [:]) else {
            Issue.record("no help")
            return
        }
        for setting in ServerConfiguration.settings {
            #expect(text.contains(setting.flag))
            #expect(text.contains("default: \(setting.defaultValue)"))
            #expect(text.contains(setting.key))
            if let variable = setting.environment { #expect(text.contains(variable)) }
        }
        for field in ["numberOfAdvertisements", "maximumBorrowWait", "maximumPools", "retry.probeInterval", "ADLOADERD_CONFIG"] {
            #expect(text.contains(field))
        }
    }
}
