import AdLoaderConfiguration
import AdLoaderCore
import AdLoaderJSON

extension ConfigType where Value == [ConsentClass] {
    /// `loaders.NAME.consent.classes`: an object of classes in precedence order, each
    /// `{"gdpr", "consentString", "gpp", "gppSectionIDs", "usPrivacy", "coppa", "limitAdTracking"}`
    /// (every member optional). Checked further by ``ConsentPolicy/validate(prefix:)``.
    static var consentClasses: Self {
        Self(
            parse: { (value, field) throws(ConfigError) in
                guard case .json(.object(let members)) = value else {
                    throw ConfigError(field: field, message: "must be an object of consent classes in precedence order")
                }
                var classes: [ConsentClass] = []
                for (name, body) in members {
                    let prefix = "\(field).\(name)"
                    guard case .object(let settings) = body else {
                        throw ConfigError(field: prefix, message: "must be an object, got \(body.kind)")
                    }
                    var terms = ConsentTerms()
                    for (key, setting) in settings {
                        let at = "\(prefix).\(key)"
                        let raw = ConfigValue.json(setting)
                        switch key {
                        case "gdpr": terms.gdpr = try raw.bool(at)
                        case "consentString": terms.consentString = try raw.string(at)
                        case "gpp": terms.gpp = try raw.string(at)
                        case "gppSectionIDs":
                            guard case .array(let items) = setting else {
                                throw ConfigError(field: at, message: "must be an array of GPP section ids")
                            }
                            var ids: [UInt32] = []
                            for (index, item) in items.enumerated() {
                                ids.append(UInt32(try ConfigValue.json(item).int("\(at)[\(index)]", in: 1...65_535)))
                            }
                            terms.gppSectionIDs = ids
                        case "usPrivacy": terms.usPrivacy = try raw.string(at)
                        case "coppa": terms.coppa = try raw.bool(at)
                        case "limitAdTracking": terms.limitAdTracking = try raw.bool(at)
                        default:
                            throw ConfigError(
                                field: at,
                                message: "unknown setting"
                                    + Suggestion.didYouMean(
                                        key,
                                        among: [
                                            "gdpr", "consentString", "gpp", "gppSectionIDs", "usPrivacy", "coppa",
                                            "limitAdTracking",
                                        ]))
                        }
                    }
                    classes.append(ConsentClass(name: name, terms: terms))
                }
                return classes
            },
            format: { classes in "{" + classes.map { "\"\($0.name)\": {...}" }.joined(separator: ", ") + "}" })
    }
}

extension ConfigType where Value == Set<Int> {
    /// An array of TCF purpose numbers.
    static var purposes: Self {
        Self(
            parse: { (value, field) throws(ConfigError) in
                guard case .json(.array(let items)) = value else {
                    throw ConfigError(field: field, message: "must be an array of TCF purposes (1...24)")
                }
                var result: Set<Int> = []
                for (index, item) in items.enumerated() {
                    result.insert(try ConfigValue.json(item).int("\(field)[\(index)]", in: 1...24))
                }
                return result
            }, format: { "[" + $0.sorted().map(String.init).joined(separator: ", ") + "]" })
    }
}
