import AdLoaderCore
import AdLoaderService
import AdStores

/// Where app-open counts are kept (`capStore` in the configuration): the store type and
/// its settings. The store is opened only when a loader has format appOpen.
public struct CapStoreConfiguration: Hashable, Sendable {
    /// The store type.
    public enum StoreType: String, Hashable, Sendable, CaseIterable {
        /// A SQLite file: counts survive restarts; one machine (the embedded default).
        case sqlite
        /// Redis: counts shared by every daemon using the same server.
        case redis
        /// In memory: counts end with the process (tests, demos).
        case memory
    }

    public var type: StoreType = .sqlite
    /// The SQLite file (created when missing).
    public var sqlitePath = "adloaderd-appopen.sqlite"
    /// `normal` by default: a commit is in the WAL (the OS's page cache) before the answer, so
    /// nothing is lost on `kill -9`, for ~20 us on the loop; `full` adds an fsync per commit
    /// (1-4 ms here, BENCHMARKS.md) for durability across power loss, on a worker thread with
    /// group commit.
    public var sqliteSynchronous: SQLiteCapStore.Synchronous = .normal
    public var redisHost = "127.0.0.1"
    public var redisPort = 6379
    public var redisKeyPrefix = "adloader:appopen"
    /// For the connect and every reply.
    public var redisTimeout: Duration = .milliseconds(200)
    /// After a failure, calls fail at once for this long, then the next one reconnects.
    public var redisReconnectInterval: Duration = .seconds(1)
    /// What AppOpen does while the store fails.
    public var outage: CapStoreOutageMode = .refuse

    public init() {}

    /// - Throws: ``ConfigError`` naming the setting.
    public func validate() throws(ConfigError) {
        if type == .sqlite && sqlitePath.isEmpty { throw ConfigError(field: "capStore.sqlitePath", message: "must not be empty") }
        if redisHost.isEmpty { throw ConfigError(field: "capStore.redisHost", message: "must not be empty") }
        if redisKeyPrefix.isEmpty { throw ConfigError(field: "capStore.redisKeyPrefix", message: "must not be empty") }
        if redisTimeout <= .zero { throw ConfigError(field: "capStore.redisTimeout", message: "must be positive") }
        if redisReconnectInterval < .zero {
            throw ConfigError(field: "capStore.redisReconnectInterval", message: "must not be negative")
        }
    }

    /// Opens the configured store. SQLite with `synchronous` full runs on a worker thread
    /// (``BackgroundCapStore``: its fsyncs would stall the loop), which wakes the loop with
    /// `wake` after each commit; the caller makes that wake-up call ``BackgroundCapStore/drainCompletions()``.
    /// - Throws: ``CapStoreError`` when the SQLite file cannot be opened (Redis connects lazily).
    func makeStore(wake: @escaping @Sendable () -> Void) throws(CapStoreError) -> any CapStore {
        switch type {
        case .sqlite where sqliteSynchronous == .full:
            try BackgroundCapStore(store: SQLiteCapStore(path: sqlitePath, synchronous: .full), wake: wake)
        case .sqlite: try SQLiteCapStore(path: sqlitePath, synchronous: sqliteSynchronous)
        case .redis:
            RedisCapStore(
                host: redisHost, port: redisPort, keyPrefix: redisKeyPrefix, timeout: redisTimeout,
                reconnectInterval: redisReconnectInterval)
        case .memory: InMemoryCapStore()
        }
    }
}
