package import AdLoaderCore

/// One row of a configuration table: a setting's key, how its value is parsed and where it is
/// stored, its help text, and optionally a command-line flag (the environment variable is
/// derived from the flag). The default is not written in the row: ``ConfigTable`` shows the
/// value its `defaults` hold, so help and behaviour cannot disagree.
package struct ConfigKey<Target: Sendable>: Sendable {
    /// The key inside its section, dotted when nested: `maxConnections`, `retry.delay`.
    package let key: String
    /// The flag, e.g. `--max-connections`; nil for a setting only the JSON file can give.
    package let flag: String?
    /// What the setting does, for `--help`.
    package let help: String
    /// Shows the setting's value in a target (its default, given the defaults).
    package let show: @Sendable (Target) -> String
    /// Parses a raw value and stores it; the error names `field`, the full dotted key.
    package let apply: @Sendable (inout Target, ConfigValue, _ field: String) throws(ConfigError) -> Void

    package init(
        key: String, flag: String?, help: String, show: @escaping @Sendable (Target) -> String,
        apply: @escaping @Sendable (inout Target, ConfigValue, _ field: String) throws(ConfigError) -> Void
    ) {
        self.key = key
        self.flag = flag
        self.help = help
        self.show = show
        self.apply = apply
    }

    /// A row storing a value of `type` at `path`.
    package static func value<Value>(
        _ key: String, _ path: any WritableKeyPath<Target, Value> & Sendable, _ type: ConfigType<Value>,
        flag: String? = nil, _ help: String
    ) -> Self {
        Self(
            key: key, flag: flag, help: help, show: { type.format($0[keyPath: path]) },
            apply: { (target, value, field) throws(ConfigError) in target[keyPath: path] = try type.parse(value, field)
            })
    }

    /// The environment variable of this row's flag: `--max-connections` → `ADLOADERD_MAX_CONNECTIONS`.
    package var environment: String? { flag.map(Self.environmentVariable(forFlag:)) }
}

extension ConfigKey {
    /// The environment variable standing for a flag: `ADLOADERD_` and the flag's name in capitals,
    /// dashes as underscores (`--unix-socket` → `ADLOADERD_UNIX_SOCKET`).
    package static func environmentVariable(forFlag flag: String) -> String {
        "ADLOADERD_" + String(flag.drop { $0 == "-" }.uppercased().map { $0 == "-" ? "_" : $0 })
    }
}
