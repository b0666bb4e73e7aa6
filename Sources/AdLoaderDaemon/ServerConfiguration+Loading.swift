import AdLoaderArguments
import AdLoaderBuild
import AdLoaderConfiguration
public import AdLoaderCore
import AdLoaderJSON
import AdLoaderWire

#if canImport(Glibc)
    import Glibc
#endif

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
    public static let configEnvironment = environmentVariable(forFlag: configFlag)

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
        try load(arguments: arguments, environment: environment, readFile: readFile, sourceTypes: .standard)
    }

    /// ``load(arguments:environment:readFile:)`` with the demand source types `sourceTypes`.
    static func load(
        arguments: [String], environment: [String: String],
        readFile: (String) throws(ConfigError) -> String = ServerConfiguration.readFile,
        sourceTypes: DemandSourceRegistry
    ) throws(ConfigError) -> ServerCommand {
        let settings = settings(sourceTypes: sourceTypes)
        // Flags first, applied last: parse them now to find --help and --config.
        var flags: [(ConfigSetting, String)] = []
        var configPath = environment[configEnvironment].flatMap { $0.isEmpty ? nil : $0 }
        var scanner = ArgumentScanner(arguments)
        do throws(ArgumentScanner.Failure) {
            while let argument = scanner.next() {
                switch argument {
                case .option("--help"), .option("-h"):
                    return .help(helpText(sourceTypes: sourceTypes))
                case .option("--version"):
                    return .help(
                        "adloaderd \(BuildInfo.version) (\(BuildCommit.build(configuration: BuildInfo.build)))\n")
                case .option(configFlag):
                    configPath = try scanner.value()
                case .option(let name):
                    guard let setting = settings.first(where: { $0.flag == name }) else {
                        let flagNames = settings.compactMap(\.flag) + [configFlag, "--help"]
                        throw ArgumentScanner.Failure(
                            option: name,
                            message: "unknown option\(Suggestion.didYouMean(name, among: flagNames)) (see --help)")
                    }
                    flags.append((setting, try scanner.value()))
                case .positional(let text):
                    throw ArgumentScanner.Failure(option: text, message: "unexpected argument (see --help)")
                }
            }
        } catch {
            throw ConfigError(field: error.option, message: error.message)
        }

        var configuration = ServerConfiguration()
        if let configPath {
            let text = try readFile(configPath)
            try configuration.apply(fileText: text, path: configPath, sourceTypes: sourceTypes)
        }
        for setting in settings {
            if let variable = setting.environment, let value = environment[variable], let apply = setting.apply {
                do {
                    try apply(&configuration, .text(value))
                } catch {
                    throw ConfigError(field: error.field, message: "\(error.message) (from \(variable))")
                }
            }
        }
        for (setting, value) in flags {
            do {
                try setting.apply?(&configuration, .text(value))
            } catch {
                throw ConfigError(field: error.field, message: "\(error.message) (from \(setting.flag ?? ""))")
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
    mutating func apply(fileText: String, path: String, sourceTypes: DemandSourceRegistry) throws(ConfigError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(fileText)
        } catch {
            throw ConfigError(
                field: "config",
                message: "\(path):\(error.line):\(error.column): invalid JSON: \(error.message) (byte \(error.offset))")
        }
        guard case .object(let sections) = document else {
            throw ConfigError(field: "config", message: "\(path): must be a JSON object")
        }
        for (section, value) in sections {
            switch section {
            case "listeners", "admin", "auth", "tls", "limits", "http2", "log", "capStore", "poolStore":
                let table = Self.scalarSections.first { $0.section == section }!
                guard case .object(let members) = value else {
                    throw ConfigError(field: section, message: "must be an object, got \(value.kind)")
                }
                try table.apply(members, to: &self, prefix: section)
            case "sources":
                try applySources(value, sourceTypes: sourceTypes)
            case "loaders":
                try applyLoaders(value)
            default:
                let sections = [
                    "listeners", "admin", "auth", "tls", "limits", "http2", "log", "capStore", "poolStore", "sources",
                    "loaders",
                ]
                throw ConfigError(
                    field: section,
                    message:
                        "unknown setting\(Suggestion.didYouMean(section, among: sections)) (expected \(sections.joined(separator: ", ")))"
                )
            }
        }
    }

    private mutating func applySources(_ value: JSONValue, sourceTypes: DemandSourceRegistry) throws(ConfigError) {
        guard case .object(let members) = value else {
            throw ConfigError(field: "sources", message: "must be an object of named sources, got \(value.kind)")
        }
        for (name, item) in members {
            sources[name] = try sourceTypes.decode(item, name: name, over: sources[name])
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
            try Self.loaderKeys.apply(fields, to: &loader, prefix: prefix)
            loaders.append(loader)
        }
    }
}
