public import AdLoaderCore

/// What a restart keeps (`poolStore` in the configuration): today the outbox of win, billing
/// and loss notices not yet delivered. SQLite by default, in a file next to the app-open
/// store; `off` keeps everything in memory only (a restart loses undelivered notices).
public struct PoolStoreConfiguration: Hashable, Sendable {
    public enum StoreType: String, Hashable, Sendable, CaseIterable {
        /// A SQLite file (the default), with the write-through journal next to it.
        case sqlite
        /// The fleet's Redis (capStore's host, port, AUTH and TLS), one key per instance name: read
        /// at the start, written at a clean stop (``RedisPoolStore``); no crash journal.
        case redis
        /// Nothing kept: memory only, as before the store existed.
        case off
    }

    public var type: StoreType = .sqlite
    /// The SQLite file (created when missing; an unusable one is moved aside).
    public var sqlitePath = "adloaderd-pools.sqlite"
    /// With `redis`: the key is `<redisKeyPrefix>:{<instance name>}`.
    public var redisKeyPrefix = "adloader:pools"
    /// With `redis`: connect and reply timeout of the start's read and the stop's write.
    public var redisTimeout: Duration = .seconds(5)
    /// With `sqlite`: the journal is compacted (rewritten as one checkpoint, on a thread of its
    /// own) once this much was appended since the last checkpoint (and more than its size).
    public var journalCompactionSize = 64 << 20

    public init() {}

    /// - Throws: ``ConfigError`` naming the setting.
    public func validate() throws(ConfigError) {
        if type == .sqlite && sqlitePath.isEmpty {
            throw ConfigError(field: "poolStore.sqlitePath", message: "must not be empty")
        }
        if type == .redis && redisKeyPrefix.isEmpty {
            throw ConfigError(field: "poolStore.redisKeyPrefix", message: "must not be empty")
        }
        if redisTimeout <= .zero { throw ConfigError(field: "poolStore.redisTimeout", message: "must be positive") }
        if journalCompactionSize < 64 << 10 {
            throw ConfigError(field: "poolStore.journalCompactionSize", message: "must be at least 64KiB")
        }
    }
}
