import AdLoaderCore
import AdLoaderDaemon

/// Fuzzes the placement and separation rules of a loader (issue 24): the input is the JSON value
/// of `loaders.default.placement` (our keys or MoPub's server-positioning JSON), or of
/// `loaders.default.separation` when it starts with a space, read by the daemon's configuration
/// loader. Loading
/// returns a configuration or throws a ``ConfigError`` naming a field under the setting — never
/// traps. Rules it returns validate and answer consistently: the ad positions of any window are
/// exactly the positions that carry an ad, ascending, never side by side through the repeating
/// interval, numbered 0, 1, 2 … in order and at most `maximumAdsPerFeed`.
public enum PlacementFuzz: FuzzTarget {
    public static let name = "placement"

    /// The feed window checked position by position (the interval and positions go to 65,536;
    /// windows further out are checked too, below).
    static let window = 512

    public static func test(_ input: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let value = String(decoding: input, as: UTF8.self)
        // One configuration load per input (each is most of an input's cost): placement, or
        // separation when the input starts with a space (JSON allows it before the value).
        if input.first != 0x20 {
            if let loader = try load(setting: "placement", value: value) { try check(loader.placement) }
        } else if let loader = try load(setting: "separation", value: value) {
            let rules = loader.separation
            for distance in [rules.creativeDistance, rules.advertiserDomainDistance, rules.categoryDistance] {
                if let distance, !(1...1000).contains(distance) {
                    throw FuzzFailure("separation distance \(distance) loaded, outside 1...1000")
                }
            }
        }
    }

    /// The default loader of a configuration whose `setting` is `value`; nil when refused.
    static func load(setting: String, value: String) throws(FuzzFailure) -> LoaderConfiguration? {
        let file = "{\"loaders\": {\"default\": {\"\(setting)\": \(value)}}}"
        let result = Result { () throws(ConfigError) in
            try ServerConfiguration.load(
                arguments: ["--config", "fuzz.json"], environment: [:], readFile: { (_) throws(ConfigError) in file })
        }
        switch result {
        case .success(.run(let configuration)):
            guard let loader = configuration.loaders.first(where: { $0.name == "default" }) else {
                throw FuzzFailure("the configuration lost its loader")
            }
            return loader
        case .success:
            return nil
        case .failure(let error):
            if error.message.isEmpty { throw FuzzFailure("a configuration error without a message") }
            return nil
        }
    }

    static func check(_ rules: PlacementRules) throws(FuzzFailure) {
        do throws(ConfigError) {
            try rules.validate(prefix: "loaders.default.placement")
        } catch {
            throw FuzzFailure("loaded placement rules do not validate: \(error)")
        }
        let positions = rules.adPositions(in: 0..<window)
        let carrying = (0..<window).filter(rules.carriesAd)
        guard positions == carrying else {
            throw FuzzFailure(
                "adPositions \(positions.prefix(8)) differ from carriesAd \(carrying.prefix(8)) for \(rules)")
        }
        guard positions.count <= rules.maximumAdsPerFeed else {
            throw FuzzFailure("\(positions.count) ads, more than maximumAdsPerFeed \(rules.maximumAdsPerFeed)")
        }
        for (ordinal, position) in positions.enumerated() where rules.adIndex(at: position) != ordinal {
            throw FuzzFailure(
                "the ad at \(position) is numbered \(String(describing: rules.adIndex(at: position))), not \(ordinal)")
        }
        let lastFixed = rules.fixedPositions.last ?? -1
        for (a, b) in zip(positions, positions.dropFirst()) where a > lastFixed && b - a < 2 {
            throw FuzzFailure("repeating ads side by side at \(a) and \(b)")
        }
        // Other windows (beyond the last fixed position too, and starting below 0): the positions
        // that carry an ad there, one by one.
        let interval = rules.repeatingInterval ?? 1
        for (lower, upper) in [
            (1, 7), (lastFixed, lastFixed + 40), (window / 2, window), (-5, 3),
            (lastFixed + 1000 * interval, lastFixed + 1000 * interval + 3 * interval),
        ] where lower < upper {
            let part = rules.adPositions(in: lower..<upper)
            let expected = (max(0, lower)..<upper).filter(rules.carriesAd)
            guard part == expected else {
                throw FuzzFailure(
                    "adPositions(in: \(lower)..<\(upper)) = \(part.prefix(8)), expected \(expected.prefix(8))")
            }
        }
    }

    public static var seeds: [(name: String, bytes: [UInt8])] {
        let values: [(String, String)] = [
            ("ours", #"{"fixedPositions": [1, 4], "repeatingInterval": 5, "maximumAdsPerFeed": 10}"#),
            ("mopub", #"{"fixed": [{"section": 0, "position": 1}, {"position": 9}], "repeating": {"interval": 5}}"#),
            ("fixed-only", #"{"fixedPositions": [0, 3, 3, 2]}"#),
            ("no-repeat", #"{"repeatingInterval": null, "fixedPositions": [7]}"#),
            ("separation", #" {"creative": 4, "advertiserDomain": 6, "category": null, "creativeOncePerFeed": true}"#),
            ("extremes", #"{"fixedPositions": [65536], "repeatingInterval": 65536, "maximumAdsPerFeed": 4096}"#),
            ("bad", #"{"fixed": [{"section": 1, "position": -1}], "repeating": {"interval": 1}}"#),
            ("empty", "{}"),
        ]
        return values.map { ($0.0, Array($0.1.utf8)) }
    }
}
