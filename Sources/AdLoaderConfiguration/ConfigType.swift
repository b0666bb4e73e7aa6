package import AdLoaderCore
package import AdLoaderLogging

/// How one kind of setting value is read (from a flag, a variable or the JSON file) and shown
/// as a default in `--help`: the "parse" and "default" columns of a ``ConfigKey`` row.
package struct ConfigType<Value>: Sendable {
    /// Reads a raw value; the error names `field`.
    package let parse: @Sendable (ConfigValue, _ field: String) throws(ConfigError) -> Value
    /// Shows a value the way a user would write it, e.g. `300s`, `4MiB`, `0660`.
    package let format: @Sendable (Value) -> String

    package init(
        parse: @escaping @Sendable (ConfigValue, _ field: String) throws(ConfigError) -> Value,
        format: @escaping @Sendable (Value) -> String
    ) {
        self.parse = parse
        self.format = format
    }
}

extension ConfigType where Value == String {
    package static var string: Self { Self(parse: { (v, f) throws(ConfigError) in try v.string(f) }, format: { $0 }) }

    /// A string where empty means "not set": shown as `none` when empty.
    package static var optionalString: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.string(f) }, format: { $0.isEmpty ? "none" : $0 })
    }
}

extension ConfigType where Value == Int {
    /// An integer, refused outside `range` with "must be LOW...HIGH, got N".
    package static func int(in range: ClosedRange<Int> = Int.min...Int.max) -> Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.int(f, in: range) }, format: { String($0) })
    }

    /// Bytes as an integer, or a number with KiB, MiB or GiB.
    package static var size: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.size(f) }) { bytes in
            for (unit, scale) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
            where bytes != 0 && bytes % scale == 0 {
                return "\(bytes / scale)\(unit)"
            }
            return String(bytes)
        }
    }
}

extension ConfigType where Value == UInt64 {
    package static var uint64: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.uint64(f) }, format: { String($0) })
    }
}

extension ConfigType where Value == UInt32 {
    /// An octal permission mode such as `0660`.
    package static var mode: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.mode(f) }, format: { "0" + String($0, radix: 8) })
    }
}

extension ConfigType where Value == Double {
    package static var double: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.double(f) }) { value in
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
    }
}

extension ConfigType where Value == Bool {
    package static var bool: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.bool(f) }, format: { String($0) })
    }
}

extension ConfigType where Value == Duration {
    /// Seconds, or a number with ms, s, m or h; shown in whole seconds when it is some.
    package static var duration: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.duration(f) }) { duration in
            let milliseconds = duration.milliseconds
            return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
        }
    }
}

extension ConfigType where Value == [String] {
    /// A JSON array of strings (a flag or variable: comma-separated).
    package static var strings: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.strings(f) }) { items in
            "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        }
    }
}

extension ConfigType where Value == [String: String] {
    /// A JSON object of strings.
    package static var stringMap: Self {
        Self(parse: { (v, f) throws(ConfigError) in try v.stringMap(f) }) { map in
            "{" + map.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ") + "}"
        }
    }
}

extension ConfigType where Value == LogLevel {
    /// `debug`, `info`, `warning` or `error`, in any case.
    package static var logLevel: Self {
        Self(
            parse: { (v, f) throws(ConfigError) in
                let name = try v.string(f)
                guard let level = LogLevel(name: name) else {
                    throw ConfigError(field: f, message: "must be debug, info, warning or error, got \"\(name)\"")
                }
                return level
            }, format: { $0.description })
    }
}

extension ConfigType where Value == AdFormat {
    /// A loader's format by name; "banner" is refused with the reason (banners are not pooled).
    package static var adFormat: Self {
        let choice = Self.choice(AdFormat.allCases.map { ($0.name, $0) })
        return Self(
            parse: { (v, f) throws(ConfigError) in
                if case .json(.string("banner")) = v { throw Self.bannerRefused(f) }
                if case .text("banner") = v { throw Self.bannerRefused(f) }
                return try choice.parse(v, f)
            }, format: choice.format)
    }

    private static func bannerRefused(_ field: String) -> ConfigError {
        ConfigError(
            field: field,
            message:
                "banner is not a pooled format: banners are shown at once and refreshed in place, not kept and lent later; use native, interstitial, rewarded or appOpen"
        )
    }
}

extension ConfigType {
    /// One of a few names, each standing for a value; anything else is refused listing them all.
    package static func choice(_ choices: [(name: String, value: Value)]) -> Self where Value: Equatable & Sendable {
        let names = choices.map(\.name)
        let expected =
            names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
        return Self(
            parse: { (v, f) throws(ConfigError) in
                let name = try v.string(f)
                guard let choice = choices.first(where: { $0.name == name }) else {
                    throw ConfigError(field: f, message: "must be \(expected), got \"\(name)\"")
                }
                return choice.value
            },
            format: { value in choices.first { $0.value == value }?.name ?? "?" })
    }

    /// One of an enumeration's cases, named by their raw values (`native`, `appOpen`, ...).
    package static func choice() -> Self
    where Value: RawRepresentable & CaseIterable & Equatable & Sendable, Value.RawValue == String {
        choice(Value.allCases.map { ($0.rawValue, $0) })
    }

    /// `base`, or nil: JSON `null`, and (when `emptyIsNone`) an empty string; nil is shown as `none`.
    package static func optional<Wrapped>(_ base: ConfigType<Wrapped>, none: String, emptyIsNone: Bool = false) -> Self
    where Value == Wrapped? {
        Self(
            parse: { (v, f) throws(ConfigError) in
                switch v {
                case .json(.null): return nil
                case .text(""), .json(.string("")): return emptyIsNone ? nil : try base.parse(v, f)
                default: return try base.parse(v, f)
                }
            },
            format: { value in value.map(base.format) ?? none })
    }
}

extension ConfigType where Value == [Int] {
    /// A JSON array of integers in `range` (a flag or variable: comma-separated).
    package static func ints(in range: ClosedRange<Int>) -> Self {
        Self(
            parse: { (v, f) throws(ConfigError) in
                let items: [ConfigValue]
                switch v {
                case .text(let text):
                    items = text.split(separator: ",").map { .text(String($0.filter { $0 != " " })) }
                case .json(.array(let values)): items = values.map { .json($0) }
                default: throw ConfigError(field: f, message: "must be an array of integers")
                }
                var result: [Int] = []
                for (index, item) in items.enumerated() { result.append(try item.int("\(f)[\(index)]", in: range)) }
                return result
            },
            format: { "[" + $0.map(String.init).joined(separator: ", ") + "]" })
    }
}
