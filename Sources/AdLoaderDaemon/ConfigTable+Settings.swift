import AdLoaderConfiguration
import AdLoaderCore

// The configuration framework (AdLoaderConfiguration) knows tables and rows; what a row is as a
// setting of the daemon's whole configuration (flags, variables, `--help`) is the daemon's.
extension ConfigTable {
    /// The rows as the user sees them, for `--help` (and, with ``settings(at:)``, flags).
    var settings: [ConfigSetting] {
        keys.map { row in
            ConfigSetting(
                section: section, name: row.key, flag: row.flag, environment: row.environment,
                defaultValue: row.show(defaults), help: row.help, apply: nil)
        }
    }

    /// The rows as settings of the whole configuration, each applied to the value at `path`.
    func settings(at path: any WritableKeyPath<ServerConfiguration, Target> & Sendable) -> [ConfigSetting] {
        keys.map { row in
            let field = "\(section).\(row.key)"
            return ConfigSetting(
                section: section, name: row.key, flag: row.flag, environment: row.environment,
                defaultValue: row.show(defaults), help: row.help,
                apply: { (configuration, value) throws(ConfigError) in
                    try row.apply(&configuration[keyPath: path], value, field)
                })
        }
    }
}

extension ServerConfiguration {
    /// The environment variable standing for a flag (``ConfigKey/environmentVariable(forFlag:)``).
    static func environmentVariable(forFlag flag: String) -> String {
        ConfigKey<ServerConfiguration>.environmentVariable(forFlag: flag)
    }
}
