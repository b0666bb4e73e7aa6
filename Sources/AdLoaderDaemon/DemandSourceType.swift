import AdLoaderConfiguration
import AdLoaderCore

/// A kind of demand source the daemon can build from configuration, named by a source's
/// `"type"` (`"sources": { "feed": { "type": "synthetic", ... } }`).
///
/// A type's settings decode and validate themselves (``SourceSettings``, declared by the source's
/// module: its ``keys`` table also gives its `--help` rows and flags); the type builds its sources; the server knows only
/// ``DemandSourceConfiguration/makeSource(context:)``. Types are listed in a
/// ``DemandSourceRegistry``; adding one is adding a type there.
protocol DemandSourceType: Sendable {
    /// What one source of this type is configured with, with its keys and checks: declared by
    /// the source's own module (``SourceSettings``).
    associatedtype Settings: SourceSettings

    /// Builds one source.
    /// - Parameters:
    ///   - settings: settings that passed ``validate(_:field:)``.
    ///   - context: the clock, scheduler, loop and logger; a source holding handles registers
    ///     its stop there.
    /// - Throws: ``ConfigError`` for settings it cannot use; any error it meets building.
    func makeSource(_ settings: Settings, context: DemandSourceContext) throws -> any DemandSource
}

extension DemandSourceType {
    /// The `type` value in the configuration, e.g. `synthetic`. The type's flags configure the
    /// source of this name (the built-in `synthetic` source for the synthetic type).
    var name: String { Settings.typeName }
    /// What sources of this type do, for `--help`.
    var summary: String { Settings.summary }
    /// The settings, one row each (JSON key, parse, help, flag); its section is `sources.` + ``name``.
    var keys: ConfigTable<Settings> { Settings.keys }
    /// The ad formats a source with `settings` can deliver; a loader of another format on it
    /// could never lend an ad, and is refused when the configuration loads.
    func formats(_ settings: Settings) -> [AdFormat] { settings.formats }
    /// The setting that lets a source of this type request `format`, for the refusal's message.
    func formatKey(_ format: AdFormat) -> String? { Settings.formatKey(for: format) }

    /// Checks settings once every one is in.
    /// - Parameter field: the source's dotted path (`sources.feed`), which errors start with.
    /// - Throws: ``ConfigError`` naming the setting, e.g. `sources.feed.fillRate`.
    func validate(_ settings: Settings, field: String) throws(ConfigError) {
        try settings.validate(field: field)
    }

    /// A source of this type with default settings.
    var defaultConfiguration: DemandSourceConfiguration { DemandSourceConfiguration(self, settings: keys.defaults) }

    /// Every setting of this type as `--help` shows it.
    var settings: [ConfigSetting] { keys.settings }

    /// The rows with a flag, as settings applying to the source named after this type (made
    /// with default settings when the file has none of that name).
    var flagSettings: [ConfigSetting] {
        keys.keys.filter { $0.flag != nil }.map { row in
            ConfigSetting(
                section: keys.section, name: row.key, flag: row.flag, environment: row.environment,
                defaultValue: row.show(keys.defaults), help: row.help,
                apply: { (configuration, value) throws(ConfigError) in
                    var source = configuration.sources[name] ?? defaultConfiguration
                    guard source.type == name else {
                        throw ConfigError(
                            field: "sources.\(name).type",
                            message: "is \"\(source.type)\", but \(row.flag!) configures a \(name) source")
                    }
                    try source.apply(key: row.key, value, field: "sources.\(name).\(row.key)")
                    configuration.sources[name] = source
                })
        }
    }
}
