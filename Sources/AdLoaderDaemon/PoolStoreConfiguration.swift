public import AdLoaderCore

/// What a restart keeps (`poolStore` in the configuration): today the outbox of win, billing
/// and loss notices not yet delivered. SQLite by default, in a file next to the app-open
/// store; `off` keeps everything in memory only (a restart loses undelivered notices).
public struct PoolStoreConfiguration: Hashable, Sendable {
    public enum StoreType: String, Hashable, Sendable, CaseIterable {
        /// A SQLite file (the default).
        case sqlite
        /// Nothing kept: memory only, as before the store existed.
        case off
    }

    public var type: StoreType = .sqlite
    /// The SQLite file (created when missing; an unusable one is moved aside).
    public var sqlitePath = "adloaderd-pools.sqlite"

    public init() {}

    /// - Throws: ``ConfigError`` naming the setting.
    public func validate() throws(ConfigError) {
        if type == .sqlite && sqlitePath.isEmpty {
            throw ConfigError(field: "poolStore.sqlitePath", message: "must not be empty")
        }
    }
}
