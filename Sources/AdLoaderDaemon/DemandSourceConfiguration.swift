import AdLoaderConfiguration
public import AdLoaderCore
import AdLoaderJSON
public import AdSources

/// One configured demand source: its type and that type's settings, ready to be built.
///
/// Decoded from `"sources": { "NAME": { "type": ..., ... } }` by the type named there (see
/// ``DemandSourceType``); the server builds the source with
/// ``makeSource(context:)`` without knowing the type.
public struct DemandSourceConfiguration: Hashable, Sendable {
    private var box: any DemandSourceBox
    /// The settings every source takes, whatever its type (``commonKeys``).
    public var common = CommonSettings()

    /// The settings every source takes, whatever its type.
    public struct CommonSettings: Hashable, Sendable {
        /// The source's request-rate budget (``RequestRateBudget``), shared by every pool of every
        /// loader using it; nil: no budget (only each pool's `maximumConcurrentRequests`).
        public var maximumRequestsPerSecond: Double?

        public init(maximumRequestsPerSecond: Double? = nil) {
            self.maximumRequestsPerSecond = maximumRequestsPerSecond
        }

        /// The budget the loader enforces, when one is set.
        public var budget: RequestRateBudget? { maximumRequestsPerSecond.map(RequestRateBudget.init) }
    }

    /// `sources.NAME` keys of every type, read before the type's own keys.
    static let commonKeys = ConfigTable<CommonSettings>(
        section: "sources.NAME", defaults: CommonSettings(),
        keys: [
            .value(
                "maximumRequestsPerSecond", \.maximumRequestsPerSecond, .optional(.double, none: "null"),
                "request-rate budget of the source, all its pools together (token bucket, one second's worth of burst); a short budget serves pools with a cell on screen waiting first; null = none; > 0, at most 1000000"
            )
        ])

    init<Type: DemandSourceType>(_ type: Type, settings: Type.Settings) {
        box = TypedDemandSource(type: type, settings: settings)
    }

    /// A synthetic source (``SyntheticSource``) with these settings.
    public static func synthetic(_ configuration: SyntheticSource.Configuration = SyntheticSource.Configuration())
        -> Self
    {
        Self(SyntheticSourceType(), settings: configuration)
    }

    /// The source's type, e.g. `synthetic`.
    public var type: String { box.typeName }

    /// The ad formats the source can deliver (``DemandSourceType/formats``).
    public var formats: [AdFormat] { box.formats }

    /// The key of the source's setting that lets it request `format` (e.g. `rewardedMedia`);
    /// nil when no setting does.
    public func formatKey(_ format: AdFormat) -> String? { box.formatKey(format) }

    /// The settings, when they are of type `Settings` (e.g. `SyntheticSource.Configuration`).
    public func settings<Settings>(as _: Settings.Type) -> Settings? { box.settings as? Settings }

    /// Checks the settings.
    /// - Parameter field: the source's dotted path (`sources.feed`), which errors start with.
    /// - Throws: ``ConfigError`` naming the setting at fault.
    public func validate(field: String) throws(ConfigError) {
        try common.budget?.validate(field: "\(field).maximumRequestsPerSecond")
        try box.validate(field: field)
    }

    /// Builds the source without a loop (sources that need none: synthetic, test doubles).
    /// - Parameters:
    ///   - clock: reads "now".
    ///   - scheduler: runs the source's answers; the loader's own scheduler.
    /// - Throws: ``ConfigError`` when the settings do not validate; errors met building it.
    public func makeSource(clock: any AdClock, scheduler: any AdScheduler) throws -> any DemandSource {
        try box.makeSource(context: DemandSourceContext(clock: clock, scheduler: scheduler))
    }

    /// Builds the source with everything the daemon offers (the loop for I/O, the logger).
    /// - Throws: ``ConfigError`` when the settings do not validate or need what `context`
    ///   lacks; errors met building it.
    public func makeSource(context: DemandSourceContext) throws -> any DemandSource {
        try box.makeSource(context: context)
    }

    /// Applies the members of the source's JSON object (without `type`) over the settings: the
    /// ``commonKeys``, then the type's own.
    mutating func apply(_ members: [(key: String, value: JSONValue)], prefix: String) throws(ConfigError) {
        let common = members.filter { Self.commonKeys.key(named: $0.key) != nil }
        try Self.commonKeys.apply(common, to: &self.common, prefix: prefix)
        try box.apply(members.filter { Self.commonKeys.key(named: $0.key) == nil }, prefix: prefix)
    }

    /// Applies one setting (from a flag or variable) over the settings.
    mutating func apply(key: String, _ value: ConfigValue, field: String) throws(ConfigError) {
        try box.apply(key: key, value, field: field)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.common == rhs.common && lhs.box.isEqual(to: rhs.box) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(common)
        hasher.combine(box.typeName)
        box.hashSettings(into: &hasher)
    }
}

/// The settings of a source with their type, without naming the type.
private protocol DemandSourceBox: Sendable {
    var typeName: String { get }
    var formats: [AdFormat] { get }
    func formatKey(_ format: AdFormat) -> String?
    var settings: any Sendable { get }
    func validate(field: String) throws(ConfigError)
    func makeSource(context: DemandSourceContext) throws -> any DemandSource
    mutating func apply(_ members: [(key: String, value: JSONValue)], prefix: String) throws(ConfigError)
    mutating func apply(key: String, _ value: ConfigValue, field: String) throws(ConfigError)
    func isEqual(to other: any DemandSourceBox) -> Bool
    func hashSettings(into hasher: inout Hasher)
}

private struct TypedDemandSource<Type: DemandSourceType>: DemandSourceBox {
    let type: Type
    var typed: Type.Settings

    init(type: Type, settings: Type.Settings) {
        self.type = type
        self.typed = settings
    }

    var typeName: String { type.name }
    var formats: [AdFormat] { type.formats(typed) }
    func formatKey(_ format: AdFormat) -> String? { type.formatKey(format) }
    var settings: any Sendable { typed }

    func validate(field: String) throws(ConfigError) { try type.validate(typed, field: field) }

    func makeSource(context: DemandSourceContext) throws -> any DemandSource {
        try type.makeSource(typed, context: context)
    }

    mutating func apply(_ members: [(key: String, value: JSONValue)], prefix: String) throws(ConfigError) {
        try type.keys.apply(members, to: &typed, prefix: prefix)
    }

    mutating func apply(key: String, _ value: ConfigValue, field: String) throws(ConfigError) {
        guard let row = type.keys.key(named: key) else {
            if let place = type.keys.moved[key] {
                throw ConfigError(field: field, message: "no longer a setting here: \(place)")
            }
            throw ConfigError(field: field, message: "unknown setting" + type.keys.suggestion(for: key))
        }
        try row.apply(&typed, value, field)
    }

    func isEqual(to other: any DemandSourceBox) -> Bool {
        guard let other = other as? Self else { return false }
        return type.name == other.type.name && typed == other.typed
    }

    func hashSettings(into hasher: inout Hasher) { hasher.combine(typed) }
}
