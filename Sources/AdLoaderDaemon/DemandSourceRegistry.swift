import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderJSON

/// The demand source types the daemon can build, by the name a source's `"type"` gives.
struct DemandSourceRegistry: Sendable {
    /// The type of a source whose configuration gives no `"type"`.
    static let defaultTypeName = "synthetic"
    /// The types this daemon is built with.
    static let standard = DemandSourceRegistry(types: [SyntheticSourceType(), OpenRTBSourceType()])

    /// In `--help` order; names are unique.
    let types: [any DemandSourceType]

    init(types: [any DemandSourceType]) {
        precondition(Set(types.map(\.name)).count == types.count, "two source types of one name")
        self.types = types
    }

    /// The type called `name`, if any.
    func type(named name: String) -> (any DemandSourceType)? { types.first { $0.name == name } }

    /// Every type's flags, each configuring the source named after its type.
    var flagSettings: [ConfigSetting] { types.flatMap(\.flagSettings) }

    /// Decodes `sources.NAME` from its JSON object: `type` (default ``defaultTypeName``) picks the
    /// type, whose keys read the other members over `existing` when that is of the same type
    /// (so the file can tune the built-in source) and over the type's defaults otherwise.
    /// - Throws: ``ConfigError`` naming `sources.NAME.type` for an unknown type, or the member at fault.
    func decode(
        _ value: JSONValue, name: String, over existing: DemandSourceConfiguration?
    ) throws(ConfigError) -> DemandSourceConfiguration {
        let prefix = "sources.\(name)"
        guard case .object(var members) = value else {
            throw ConfigError(field: prefix, message: "must be an object, got \(value.kind)")
        }
        var typeName = Self.defaultTypeName
        if let index = members.firstIndex(where: { $0.key == "type" }) {
            typeName = try ConfigValue.json(members.remove(at: index).value).string("\(prefix).type")
        }
        guard let type = type(named: typeName) else {
            throw ConfigError(
                field: "\(prefix).type",
                message:
                    "unknown source type \"\(typeName)\"\(Suggestion.didYouMean(typeName, among: types.map(\.name))) (known: \(types.map(\.name).joined(separator: ", ")))"
            )
        }
        var source = existing.flatMap { $0.type == typeName ? $0 : nil } ?? type.defaultConfiguration
        try source.apply(members, prefix: prefix)
        return source
    }
}
