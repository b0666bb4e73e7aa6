package import AdLoaderCore

/// The settings of one kind of demand source, as its own module declares them: the `type` name,
/// the key table (JSON keys, parsing, `--help` rows, flags), the checks once every key is in, and
/// the formats its sources can deliver.
///
/// Each source module (AdSources for `synthetic`, AdLoaderOpenRTB for `openrtb`) conforms its
/// `Configuration` to this, so the keys live beside the source that reads them; the daemon's
/// source registry composes these tables and only builds the sources (their loop, HTTP clients
/// and stores are the composition root's).
package protocol SourceSettings: Hashable, Sendable {
    /// The `type` value in the configuration, e.g. `synthetic`; the flags configure the source
    /// of this name.
    static var typeName: String { get }
    /// What sources of this type do, for `--help`.
    static var summary: String { get }
    /// The rows; its defaults are a new source's settings and its section is `sources.` + ``typeName``.
    static var keys: ConfigTable<Self> { get }
    /// The ad formats a source with these settings can deliver; a loader of another format on
    /// such a source is refused when the configuration loads. Default: every format.
    var formats: [AdFormat] { get }
    /// The setting (its key in ``keys``) that lets a source request `format`, for the refusal's
    /// message; nil when no setting does. Default: nil.
    static func formatKey(for format: AdFormat) -> String?

    /// Checks the settings once every one is in.
    /// - Parameter field: the source's dotted path (`sources.feed`), which errors start with.
    /// - Throws: ``ConfigError`` naming the setting, e.g. `sources.feed.fillRate`.
    func validate(field: String) throws(ConfigError)
}

extension SourceSettings {
    package var formats: [AdFormat] { AdFormat.allCases }
    package static func formatKey(for format: AdFormat) -> String? { nil }
}

extension ConfigError {
    /// This error with its field moved from a source type's own prefix (`sources.synthetic`)
    /// to the source's path (`sources.feed`); unchanged when it names no field under the prefix.
    package func renamed(from prefix: String, to field: String) -> ConfigError {
        guard self.field.hasPrefix(prefix) else { return self }
        return ConfigError(field: field + self.field.dropFirst(prefix.count), message: message)
    }
}
