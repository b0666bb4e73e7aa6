/// What an AppOpen call does when the cap store cannot be read (a Redis outage, a file error).
public enum CapStoreOutageMode: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Do not show (reason `STORE_UNAVAILABLE`): never exceed a cap. The default.
    case refuse
    /// Decide as if the counts were 0: caps are not enforced while the store is down.
    case allow

    /// The configuration name: "refuse" or "allow".
    public var name: String {
        switch self {
        case .refuse: "refuse"
        case .allow: "allow"
        }
    }

    /// The mode named `name`, or nil.
    public init?(name: String) {
        guard let mode = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = mode
    }

    public var description: String { name }
}
