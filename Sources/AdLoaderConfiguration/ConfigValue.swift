package import AdLoaderCore
package import AdLoaderJSON

/// One raw setting value: text from a flag or environment variable, or a JSON value.
package enum ConfigValue {
    case text(String)
    case json(JSONValue)

    private var shown: String {
        switch self {
        case .text(let text): "\"\(text)\""
        case .json(.string(let text)): "\"\(text)\""
        case .json(.number(_, let text)): text
        case .json(let value): value.kind
        }
    }

    private func fail(_ field: String, _ expected: String) -> ConfigError {
        ConfigError(field: field, message: "must be \(expected), got \(shown)")
    }

    private var textOrNumber: String? {
        switch self {
        case .text(let text): String(text.trimmingSpaces)
        case .json(.string(let text)): String(text.trimmingSpaces)
        case .json(.number(_, let text)): text
        default: nil
        }
    }

    package func string(_ field: String) throws(ConfigError) -> String {
        switch self {
        case .text(let text), .json(.string(let text)): return text
        default: throw fail(field, "a string")
        }
    }

    package func int(_ field: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(ConfigError) -> Int {
        guard let text = textOrNumber, let value = Int(text) else { throw fail(field, "an integer") }
        guard range.contains(value) else {
            throw ConfigError(field: field, message: "must be \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        return value
    }

    package func uint64(_ field: String) throws(ConfigError) -> UInt64 {
        guard let text = textOrNumber, let value = UInt64(text) else { throw fail(field, "an unsigned integer") }
        return value
    }

    package func double(_ field: String) throws(ConfigError) -> Double {
        guard let text = textOrNumber, let value = Double(text), value.isFinite else { throw fail(field, "a number") }
        return value
    }

    package func bool(_ field: String) throws(ConfigError) -> Bool {
        switch self {
        case .json(.bool(let value)): return value
        case .text(let text):
            switch text.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: break
            }
        default: break
        }
        throw fail(field, "true or false")
    }

    /// Seconds as a number, or a number with a unit: `250ms`, `30s`, `5m`, `1h`.
    package func duration(_ field: String) throws(ConfigError) -> Duration {
        let expected = "a duration (seconds, or a number with ms, s, m or h, e.g. \"250ms\")"
        guard let text = textOrNumber else { throw fail(field, expected) }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        for (unit, factor) in units where text.hasSuffix(unit) {
            number = text.dropLast(unit.count)
            scale = factor
            break
        }
        guard let value = Double(number.trimmingSpaces), value.isFinite, abs(value * scale) < 1e12 else {
            throw fail(field, expected)
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// Bytes as an integer, or with a unit: `64KiB`, `4MiB`, `1GiB`.
    package func size(_ field: String) throws(ConfigError) -> Int {
        let expected = "a size (bytes, or a number with KiB, MiB or GiB, e.g. \"4MiB\")"
        guard let text = textOrNumber else { throw fail(field, expected) }
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("B", 1)]
        var number = Substring(text)
        var scale = 1
        for (unit, factor) in units where text.hasSuffix(unit) {
            number = text.dropLast(unit.count)
            scale = factor
            break
        }
        guard let value = Int(number.trimmingSpaces), value >= 0, value <= Int(Int32.max) / scale * 1024 else {
            throw fail(field, expected)
        }
        return value * scale
    }

    /// An octal permission mode such as `0660` or `660`.
    package func mode(_ field: String) throws(ConfigError) -> UInt32 {
        guard let text = textOrNumber, let value = UInt32(text, radix: 8), value <= 0o777 else {
            throw fail(field, "an octal mode such as \"0660\"")
        }
        return value
    }

    package func strings(_ field: String) throws(ConfigError) -> [String] {
        switch self {
        case .text(let text):
            return text.split(separator: ",").map { String($0.trimmingSpaces) }.filter { !$0.isEmpty }
        case .json(.array(let items)):
            var result: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw ConfigError(field: "\(field)[\(index)]", message: "must be a string, got \(item.kind)")
                }
                result.append(text)
            }
            return result
        default: throw fail(field, "an array of strings")
        }
    }

    package func stringMap(_ field: String) throws(ConfigError) -> [String: String] {
        guard case .json(.object(let members)) = self else { throw fail(field, "an object of strings") }
        var result: [String: String] = [:]
        for (key, value) in members {
            guard case .string(let text) = value else {
                throw ConfigError(field: "\(field).\(key)", message: "must be a string, got \(value.kind)")
            }
            result[key] = text
        }
        return result
    }
}

extension StringProtocol {
    package var trimmingSpaces: Substring {
        let view = self[...]
        guard let first = view.firstIndex(where: { $0 != " " }) else { return "" }
        let last = view.lastIndex(where: { $0 != " " })!
        return Substring(view[first...last])
    }
}
