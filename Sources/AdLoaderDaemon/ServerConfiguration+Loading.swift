import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdSources
import AdLoaderCore
import AdSources
#if canImport(Glibc)
import Glibc
#endif

/// One scalar setting: where it lives in the JSON file, its flag and environment variable,
/// its default and what it does. ``ServerConfiguration/settings`` drives parsing and `--help`.
public struct ConfigSetting: Sendable {
    /// The dotted JSON path, also the name used in errors, e.g. `limits.maxConnections`.
    public let key: String
    public let flag: String
    public let environment: String?
    public let defaultValue: String
    public let help: String
    let apply: @Sendable (inout ServerConfiguration, ConfigValue) throws(ConfigError) -> Void
}

/// What the command line asks for.
public enum ServerCommand: Sendable {
    /// Serve with this configuration.
    case run(ServerConfiguration)
    /// Print this text (`--help`) and exit 0.
    case help(String)
}

extension ServerConfiguration {
    /// The flag and variable naming the configuration file.
    public static let configFlag = "--config"
    public static let configEnvironment = "ADLOADERD_CONFIG"

    /// Every scalar setting, in `--help` order.
    public static let settings: [ConfigSetting] = {
        func setting(
            _ key: String, _ flag: String, _ environment: String?, _ defaultValue: String, _ help: String,
            _ apply: @escaping @Sendable (inout ServerConfiguration, ConfigValue) throws(ConfigError) -> Void
        ) -> ConfigSetting {
            ConfigSetting(
                key: key, flag: flag, environment: environment, defaultValue: defaultValue, help: help, apply: apply)
        }
        var list: [ConfigSetting] = [
            setting(
                "listeners.host", "--host", "ADLOADERD_HOST", defaultHost, "TCP address to listen on (IPv4 or IPv6 literal)"
            ) { (c, v) throws(ConfigError) in c.listeners.host = try v.string("listeners.host") },
            setting(
                "listeners.port", "--port", "ADLOADERD_PORT", String(defaultPort),
                "TCP port; 0 picks a free one (the bound port is printed)"
            ) { (c, v) throws(ConfigError) in c.listeners.port = try v.int("listeners.port", in: 0...65_535) },
            setting(
                "listeners.unixSocket", "--unix-socket", "ADLOADERD_UNIX_SOCKET", "none",
                "also listen on this Unix-socket path (a stale socket file there is replaced); empty for none"
            ) { (c, v) throws(ConfigError) in
                let path = try v.string("listeners.unixSocket")
                c.listeners.unixSocket = path.isEmpty ? nil : path
            },
            setting(
                "listeners.unixSocketMode", "--unix-socket-mode", "ADLOADERD_UNIX_SOCKET_MODE", "0660",
                "permissions of the Unix-socket file, octal"
            ) { (c, v) throws(ConfigError) in c.listeners.unixSocketMode = try v.mode("listeners.unixSocketMode") },
            setting(
                "log.level", "--log-level", "ADLOADERD_LOG_LEVEL", "info",
                "debug, info, warning or error; logs are JSON lines on stderr"
            ) { (c, v) throws(ConfigError) in
                let name = try v.string("log.level")
                guard let level = LogLevel(name: name) else {
                    throw ConfigError(field: "log.level", message: "must be debug, info, warning or error, got \"\(name)\"")
                }
                c.logLevel = level
            },
        ]
        let defaults = ServerLimits()
        func limit(
            _ name: String, _ flag: String, _ defaultValue: String, _ help: String,
            _ apply: @escaping @Sendable (inout ServerLimits, ConfigValue, String) throws(ConfigError) -> Void
        ) -> ConfigSetting {
            let key = "limits.\(name)"
            let variable = "ADLOADERD_" + flag.dropFirst(2).uppercased().replacingDashes
            return setting(key, flag, variable, defaultValue, help) { (c, v) throws(ConfigError) in
                try apply(&c.limits, v, key)
            }
        }
        list += [
            limit(
                "maxMessageSize", "--max-message-size", "4MiB",
                "largest message accepted (bigger: RESOURCE_EXHAUSTED, then close) and largest Stats answer sent (bigger: RESOURCE_EXHAUSTED)"
            ) { (l, v, k) throws(ConfigError) in l.maxMessageSize = try v.size(k) },
            limit(
                "maxConnections", "--max-connections", String(defaults.maxConnections),
                "open connections, all listeners; more are closed at once"
            ) { (l, v, k) throws(ConfigError) in l.maxConnections = try v.int(k, in: 1...1_000_000) },
            limit(
                "maxCallsInFlightPerConnection", "--max-calls-in-flight", String(defaults.maxCallsInFlightPerConnection),
                "open calls per connection (incl. parked borrows, watches); more: RESOURCE_EXHAUSTED"
            ) { (l, v, k) throws(ConfigError) in l.maxCallsInFlightPerConnection = try v.int(k, in: 1...1_000_000) },
            limit(
                "maxParkedBorrows", "--max-parked-borrows", String(defaults.maxParkedBorrows),
                "borrows waiting for an ad, whole server; more: RESOURCE_EXHAUSTED"
            ) { (l, v, k) throws(ConfigError) in l.maxParkedBorrows = try v.int(k, in: 0...10_000_000) },
            limit(
                "idleTimeout", "--idle-timeout", "300s", "close a connection with no open call that sends nothing this long"
            ) { (l, v, k) throws(ConfigError) in l.idleTimeout = try v.duration(k) },
            limit(
                "partialFrameTimeout", "--partial-frame-timeout", "10s",
                "close a connection holding an incomplete frame or preface this long with no frame completing"
            ) { (l, v, k) throws(ConfigError) in l.partialFrameTimeout = try v.duration(k) },
            limit(
                "maxUnsentOutputPerConnection", "--max-unsent-output", "8MiB",
                "unsent answers per connection above which its requests stop being read until half drained (closed at 2x this + max message size)"
            ) { (l, v, k) throws(ConfigError) in l.maxUnsentOutputPerConnection = try v.size(k) },
            limit(
                "shutdownGracePeriod", "--shutdown-grace-period", "10s",
                "on SIGTERM/SIGINT, the longest wait for clients to close (new calls get UNAVAILABLE meanwhile)"
            ) { (l, v, k) throws(ConfigError) in l.shutdownGracePeriod = try v.duration(k) },
        ]
        let synthetic = SyntheticSource.Configuration()
        func source(
            _ name: String, _ flag: String, _ defaultValue: String, _ help: String,
            _ apply: @escaping @Sendable (inout SyntheticSource.Configuration, ConfigValue, String) throws(ConfigError) -> Void
        ) -> ConfigSetting {
            let key = "sources.synthetic.\(name)"
            let variable = "ADLOADERD_" + flag.dropFirst(2).uppercased().replacingDashes
            return setting(key, flag, variable, defaultValue, help) { (c, v) throws(ConfigError) in
                var configuration = c.sources["synthetic"] ?? SyntheticSource.Configuration()
                try apply(&configuration, v, key)
                c.sources["synthetic"] = configuration
            }
        }
        list += [
            source("latency", "--synthetic-latency", "\(synthetic.latency.milliseconds)ms", "synthetic source: time to answer")
            { (s, v, k) throws(ConfigError) in s.latency = try v.duration(k) },
            source("latencyJitter", "--synthetic-latency-jitter", "0ms", "synthetic source: extra random latency, 0...this")
            { (s, v, k) throws(ConfigError) in s.latencyJitter = try v.duration(k) },
            source("fillRate", "--synthetic-fill-rate", "1", "synthetic source: chance each asked-for ad is delivered")
            { (s, v, k) throws(ConfigError) in s.fillRate = try v.double(k) },
            source("errorRate", "--synthetic-error-rate", "0", "synthetic source: chance a request fails (retryable)")
            { (s, v, k) throws(ConfigError) in s.errorRate = try v.double(k) },
            source("unreachableRate", "--synthetic-unreachable-rate", "0", "synthetic source: chance a request fails as unreachable")
            { (s, v, k) throws(ConfigError) in s.unreachableRate = try v.double(k) },
            source("seed", "--synthetic-seed", "0", "synthetic source: seed of its generator")
            { (s, v, k) throws(ConfigError) in s.seed = try v.uint64(k) },
        ]
        return list
    }()

    /// Builds the configuration from defaults, the JSON file, the environment and the flags,
    /// in that order of increasing priority, and validates it.
    /// - Parameters:
    ///   - arguments: the command-line arguments without the program name.
    ///   - environment: the process environment.
    ///   - readFile: reads the configuration file (injected for tests).
    /// - Throws: ``ConfigError`` naming the setting (or flag) at fault.
    public static func load(
        arguments: [String], environment: [String: String],
        readFile: (String) throws(ConfigError) -> String = ServerConfiguration.readFile
    ) throws(ConfigError) -> ServerCommand {
        // Flags first, applied last: parse them now to find --help and --config.
        var flags: [(ConfigSetting, String)] = []
        var configPath = environment[configEnvironment].flatMap { $0.isEmpty ? nil : $0 }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help(helpText) }
            guard argument.hasPrefix("--") else {
                throw ConfigError(field: argument, message: "unexpected argument (see --help)")
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            let setting = settings.first { $0.flag == name }
            guard name == configFlag || setting != nil else {
                throw ConfigError(field: name, message: "unknown option (see --help)")
            }
            if value == nil {
                guard index < arguments.count else { throw ConfigError(field: name, message: "needs a value") }
                value = arguments[index]
                index += 1
            }
            if let setting { flags.append((setting, value!)) } else { configPath = value! }
        }

        var configuration = ServerConfiguration()
        if let configPath {
            let text = try readFile(configPath)
            try configuration.apply(fileText: text, path: configPath)
        }
        for setting in settings {
            if let variable = setting.environment, let value = environment[variable] {
                do {
                    try setting.apply(&configuration, .text(value))
                } catch {
                    throw ConfigError(field: error.field, message: "\(error.message) (from \(variable))")
                }
            }
        }
        for (setting, value) in flags {
            do {
                try setting.apply(&configuration, .text(value))
            } catch {
                throw ConfigError(field: error.field, message: "\(error.message) (from \(setting.flag))")
            }
        }
        try configuration.validate()
        return .run(configuration)
    }

    /// Reads a whole file.
    /// - Throws: ``ConfigError`` for `config` when it cannot be read.
    public static func readFile(_ path: String) throws(ConfigError) -> String {
        guard let file = fopen(path, "rb") else {
            throw ConfigError(field: "config", message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count { break }
            if bytes.count > 16 << 20 { throw ConfigError(field: "config", message: "\(path) is larger than 16 MiB") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Applies a JSON configuration document over the current values.
    /// - Throws: ``ConfigError`` naming the setting; `config` for a syntax error.
    mutating func apply(fileText: String, path: String) throws(ConfigError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(fileText)
        } catch {
            throw ConfigError(field: "config", message: "\(path): invalid JSON at byte \(error.offset): \(error.message)")
        }
        guard case .object(let sections) = document else {
            throw ConfigError(field: "config", message: "\(path): must be a JSON object")
        }
        for (section, value) in sections {
            switch section {
            case "listeners", "limits", "log":
                try applyScalars(section: section, value)
            case "sources":
                try applySources(value)
            case "loaders":
                try applyLoaders(value)
            default:
                throw ConfigError(field: section, message: "unknown setting (expected listeners, limits, log, sources, loaders)")
            }
        }
    }

    private mutating func applyScalars(section: String, _ value: JSONValue) throws(ConfigError) {
        guard case .object(let members) = value else {
            throw ConfigError(field: section, message: "must be an object, got \(value.kind)")
        }
        for (key, item) in members {
            let path = "\(section).\(key)"
            guard let setting = Self.settings.first(where: { $0.key == path }) else {
                throw ConfigError(field: path, message: "unknown setting")
            }
            try setting.apply(&self, .json(item))
        }
    }

    private mutating func applySources(_ value: JSONValue) throws(ConfigError) {
        guard case .object(let members) = value else {
            throw ConfigError(field: "sources", message: "must be an object of named sources, got \(value.kind)")
        }
        for (name, item) in members {
            let prefix = "sources.\(name)"
            guard case .object(let fields) = item else {
                throw ConfigError(field: prefix, message: "must be an object, got \(item.kind)")
            }
            var configuration = sources[name] ?? SyntheticSource.Configuration()
            for (key, field) in fields {
                let path = "\(prefix).\(key)"
                let value = ConfigValue.json(field)
                switch key {
                case "type":
                    let type = try value.string(path)
                    guard type == "synthetic" else {
                        throw ConfigError(field: path, message: "must be \"synthetic\", got \"\(type)\"")
                    }
                case "latency": configuration.latency = try value.duration(path)
                case "latencyJitter": configuration.latencyJitter = try value.duration(path)
                case "fillRate": configuration.fillRate = try value.double(path)
                case "errorRate": configuration.errorRate = try value.double(path)
                case "unreachableRate": configuration.unreachableRate = try value.double(path)
                case "seed": configuration.seed = try value.uint64(path)
                default: throw ConfigError(field: path, message: "unknown setting")
                }
            }
            sources[name] = configuration
        }
    }

    private mutating func applyLoaders(_ value: JSONValue) throws(ConfigError) {
        guard case .object(let members) = value else {
            throw ConfigError(field: "loaders", message: "must be an object of named loaders, got \(value.kind)")
        }
        loaders = []
        for (name, item) in members {
            let prefix = "loaders.\(name)"
            guard case .object(let fields) = item else {
                throw ConfigError(field: prefix, message: "must be an object, got \(item.kind)")
            }
            var loader = LoaderConfiguration(name: name)
            for (key, field) in fields {
                let path = "\(prefix).\(key)"
                let value = ConfigValue.json(field)
                switch key {
                case "source": loader.source = try value.string(path)
                case "keywords": loader.keywords = try value.strings(path)
                case "contentURL":
                    if case .json(.null) = value { loader.contentURL = nil } else { loader.contentURL = try value.string(path) }
                case "nonPersonalized": loader.nonPersonalized = try value.bool(path)
                case "targeting": loader.targeting = try value.stringMap(path)
                case "numberOfAdvertisements": loader.numberOfAdvertisements = try value.int(path)
                case "maximumRetainedAdvertisements": loader.maximumRetainedAdvertisements = try value.int(path)
                case "lifetime": loader.lifetime = try value.duration(path)
                case "sweepInterval": loader.sweepInterval = try value.duration(path)
                case "showCountThreshold": loader.showCountThreshold = try value.int(path)
                case "leaseTimeout": loader.leaseTimeout = try value.duration(path)
                case "maximumBorrowWait": loader.maximumBorrowWait = try value.duration(path)
                case "maximumPools": loader.maximumPools = try value.int(path)
                case "enabled": loader.enabled = try value.bool(path)
                case "retry": try Self.applyRetry(&loader.retry, field, prefix: path)
                default: throw ConfigError(field: path, message: "unknown setting")
                }
            }
            loaders.append(loader)
        }
    }

    private static func applyRetry(_ retry: inout RetryPolicy, _ value: JSONValue, prefix: String) throws(ConfigError) {
        guard case .object(let fields) = value else {
            throw ConfigError(field: prefix, message: "must be an object, got \(value.kind)")
        }
        for (key, field) in fields {
            let path = "\(prefix).\(key)"
            let value = ConfigValue.json(field)
            switch key {
            case "delay": retry.delay = try value.duration(path)
            case "multiplier": retry.multiplier = try value.double(path)
            case "maximumDelay": retry.maximumDelay = try value.duration(path)
            case "jitter": retry.jitter = try value.double(path)
            case "maximumCount": retry.maximumCount = try value.int(path)
            case "probeInterval": retry.probeInterval = try value.duration(path)
            default: throw ConfigError(field: path, message: "unknown setting")
            }
        }
    }
}

extension StringProtocol {
    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }
}
