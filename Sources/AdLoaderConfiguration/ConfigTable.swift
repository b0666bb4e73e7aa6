package import AdLoaderCore
package import AdLoaderJSON

/// The settings of one configuration section (listeners, limits, log, a loader, a source type):
/// its rows and the defaults they start from. Parsing the JSON file, the flags, the
/// environment variables and `--help` are all driven by these tables.
package struct ConfigTable<Target: Sendable>: Sendable {
    /// Where the section sits in the JSON file: `listeners`, `loaders.NAME`, `sources.NAME`.
    package let section: String
    /// The values before any setting applies; what `--help` shows as defaults.
    package let defaults: Target
    /// The rows, in `--help` order.
    package let keys: [ConfigKey<Target>]
    /// Keys this section had once, with where their setting lives now: refused naming it.
    package var moved: [String: String] = [:]

    package init(section: String, defaults: Target, keys: [ConfigKey<Target>], moved: [String: String] = [:]) {
        self.section = section
        self.defaults = defaults
        self.keys = keys
        self.moved = moved
    }

    /// The row for a key inside the section (`retry.delay`), if any.
    package func key(named name: String) -> ConfigKey<Target>? { keys.first { $0.key == name } }

    /// Applies the members of a JSON object over `target`; an object member whose name starts
    /// dotted keys (`"retry": { "delay": 1 }` for `retry.delay`) is applied member by member.
    /// - Parameter prefix: the object's dotted path, for errors (`loaders.feed`).
    /// - Throws: ``ConfigError`` naming the member: an unknown key, or a value that does not parse.
    package func apply(_ members: [(key: String, value: JSONValue)], to target: inout Target, prefix: String)
        throws(ConfigError)
    {
        try apply(members, to: &target, prefix: prefix, keyPrefix: "")
    }

    private func apply(
        _ members: [(key: String, value: JSONValue)], to target: inout Target, prefix: String, keyPrefix: String
    ) throws(ConfigError) {
        for (name, value) in members {
            let key = keyPrefix + name
            let field = "\(prefix).\(key)"
            if let row = self.key(named: key) {
                try row.apply(&target, .json(value), field)
            } else if keys.contains(where: { $0.key.hasPrefix(key + ".") }) {
                guard case .object(let nested) = value else {
                    throw ConfigError(field: field, message: "must be an object, got \(value.kind)")
                }
                try apply(nested, to: &target, prefix: prefix, keyPrefix: key + ".")
            } else if let place = moved[key] {
                throw ConfigError(field: field, message: "no longer a setting here: \(place)")
            } else {
                throw ConfigError(
                    field: field, message: "unknown setting" + suggestion(for: name, keyPrefix: keyPrefix))
            }
        }
    }

    /// ` (did you mean "x"?)` naming the known key nearest `name` at its level (`delay` inside
    /// `retry`), or an empty string.
    package func suggestion(for name: String, keyPrefix: String = "") -> String {
        var names: [String] = []
        for row in keys where row.key.hasPrefix(keyPrefix) {
            let rest = row.key.dropFirst(keyPrefix.count)
            let next = String(rest.prefix { $0 != "." })
            if !names.contains(next) { names.append(next) }
        }
        return Suggestion.didYouMean(name, among: names)
    }
}
