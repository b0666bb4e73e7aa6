import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderJSON

extension ConfigType where Value == PlacementRules {
    /// `loaders.NAME.placement`: our keys (`fixedPositions`, `repeatingInterval`,
    /// `maximumAdsPerFeed`) or MoPub's server-positioning JSON verbatim
    /// (`{"fixed":[{"section":0,"position":1}],"repeating":{"interval":5}}`), or both mixed
    /// (one way per setting). Fixed positions are sorted and deduplicated as MoPub's client does;
    /// without a repeating interval there is none; `maximumAdsPerFeed` defaults to 256.
    static var placement: Self {
        Self(
            parse: { (value, field) throws(ConfigError) in try parsePlacement(value, field: field) },
            format: { rules in
                var parts: [String] = []
                parts.append("\"fixedPositions\": [\(rules.fixedPositions.map(String.init).joined(separator: ", "))]")
                parts.append("\"repeatingInterval\": \(rules.repeatingInterval.map(String.init) ?? "null")")
                parts.append("\"maximumAdsPerFeed\": \(rules.maximumAdsPerFeed)")
                return "{" + parts.joined(separator: ", ") + "}"
            })
    }

    static func parsePlacement(_ value: ConfigValue, field: String) throws(ConfigError) -> PlacementRules {
        guard case .json(.object(let members)) = value else {
            throw ConfigError(field: field, message: "must be an object (our keys or MoPub's server positioning JSON)")
        }
        var fixed: [Int]?
        var interval: Int??
        var maximum = PlacementRules.defaultMaximumAds
        let known = ["fixed", "repeating", "fixedPositions", "repeatingInterval", "maximumAdsPerFeed"]
        func integer(_ json: JSONValue, _ field: String) throws(ConfigError) -> Int {
            try ConfigValue.json(json).int(field)
        }
        for (key, item) in members {
            let sub = "\(field).\(key)"
            switch key {
            case "fixed", "fixedPositions":
                if fixed != nil {
                    throw ConfigError(field: sub, message: "fixed positions are given twice (fixed and fixedPositions)")
                }
                guard case .array(let items) = item else {
                    throw ConfigError(field: sub, message: "must be an array, got \(item.kind)")
                }
                var positions: [Int] = []
                for (index, element) in items.enumerated() {
                    let at = "\(sub)[\(index)]"
                    if key == "fixedPositions" {
                        positions.append(try integer(element, at))
                        continue
                    }
                    // MoPub: {"section": S, "position": P}; section defaults to 0.
                    guard case .object(let fields) = element else {
                        throw ConfigError(
                            field: at,
                            message: "must be an object {\"section\": 0, \"position\": N}, got \(element.kind)")
                    }
                    var position: Int?
                    for (name, part) in fields {
                        switch name {
                        case "position": position = try integer(part, "\(at).position")
                        case "section":
                            let section = try integer(part, "\(at).section")
                            if section != 0 {
                                throw ConfigError(
                                    field: "\(at).section",
                                    message: "a feed has one section, 0 (as MoPub's Android placer), got \(section)")
                            }
                        default:
                            throw ConfigError(
                                field: "\(at).\(name)",
                                message:
                                    "unknown setting\(Suggestion.didYouMean(name, among: ["section", "position"])) (expected section, position)"
                            )
                        }
                    }
                    guard let position else { throw ConfigError(field: at, message: "has no position") }
                    positions.append(position)
                }
                fixed = Array(Set(positions)).sorted()
            case "repeating":
                if interval != nil {
                    throw ConfigError(
                        field: sub, message: "the interval is given twice (repeating and repeatingInterval)")
                }
                switch item {
                case .null: interval = .some(nil)
                case .object(let fields):
                    var value: Int?
                    for (name, part) in fields {
                        guard name == "interval" else {
                            throw ConfigError(
                                field: "\(sub).\(name)",
                                message:
                                    "unknown setting\(Suggestion.didYouMean(name, among: ["interval"])) (expected interval)"
                            )
                        }
                        value = try integer(part, "\(sub).interval")
                    }
                    guard let value else { throw ConfigError(field: sub, message: "has no interval") }
                    interval = .some(value)
                default: throw ConfigError(field: sub, message: "must be an object {\"interval\": N}, got \(item.kind)")
                }
            case "repeatingInterval":
                if interval != nil {
                    throw ConfigError(
                        field: sub, message: "the interval is given twice (repeating and repeatingInterval)")
                }
                interval = .some(item == .null ? nil : try integer(item, sub))
            case "maximumAdsPerFeed":
                maximum = try integer(item, sub)
            default:
                throw ConfigError(
                    field: sub,
                    message:
                        "unknown setting\(Suggestion.didYouMean(key, among: known)) (expected \(known.joined(separator: ", ")))"
                )
            }
        }
        let rules = PlacementRules(
            fixedPositions: fixed ?? [], repeatingInterval: interval ?? nil, maximumAdsPerFeed: maximum)
        try rules.validate(prefix: field)
        return rules
    }
}
