import AdLoaderConfiguration
import AdLoaderCore

/// One setting as the user sees it: its JSON key, flag, environment variable, default and
/// help. ``ServerConfiguration/settings`` lists those with a flag; `--help` lists them all.
public struct ConfigSetting: Sendable {
    /// The section's dotted path: `limits`, `loaders.NAME`, `sources.synthetic`.
    public let section: String
    /// The key inside the section: `maxConnections`, `retry.delay`.
    public let name: String
    /// The command-line flag; nil when only the JSON file can give the setting.
    public let flag: String?
    /// The environment variable, derived from the flag.
    public let environment: String?
    /// The default, as a user would write it.
    public let defaultValue: String
    public let help: String
    /// Applies a flag's or variable's value; nil for settings only the file gives.
    let apply: (@Sendable (inout ServerConfiguration, ConfigValue) throws(ConfigError) -> Void)?

    /// The dotted JSON path, also the name used in errors, e.g. `limits.maxConnections`.
    public var key: String { "\(section).\(name)" }
}
