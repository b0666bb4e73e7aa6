public import AdLoaderCore
import AdLoaderService
import AdLoaderTLS
import AdLoaderUV
public import AdStores
import Foundation

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
    /// For the connect and every reply (a timer on the loop: the loop never waits for Redis).
    public var redisTimeout: Duration = .milliseconds(200)
    /// Redis Cluster: `redisHost:redisPort` is a seed node; calls go to the master of their
    /// device's slot.
    public var redisCluster = false
    /// The ACL user to `AUTH` as (empty: the default user).
    public var redisUser = ""
    /// A file whose first line is the `AUTH` password (empty: no AUTH). A file, not a value,
    /// so the password is in neither the command line nor the configuration.
    public var redisPasswordFile = ""
    /// After a failure, calls fail at once for this long, then the next one reconnects.
    public var redisReconnectInterval: Duration = .seconds(1)
    /// TLS to Redis: every connection (each node of a cluster, the pool store's) runs TLS 1.2+.
    public var redisTLS = false
    /// PEM CA certificates Redis' certificate must chain to (empty: the system's trust store).
    public var redisTLSCAFile = ""
    /// PEM certificate chain presented to a Redis that asks for one (`tls-auth-clients`); empty: none.
    public var redisTLSCertificateFile = ""
    /// PEM private key of ``redisTLSCertificateFile``.
    public var redisTLSKeyFile = ""
    /// The name Redis' certificate must carry, and the SNI sent (empty: the address connected to:
    /// `redisHost`, or each cluster node's address).
    public var redisTLSServerName = ""
    /// What AppOpen does while the store fails.
    public var outage: CapStoreOutageMode = .refuse

    public init() {}

    /// - Throws: ``ConfigError`` naming the setting.
    public func validate() throws(ConfigError) {
        if type == .sqlite && sqlitePath.isEmpty {
            throw ConfigError(field: "capStore.sqlitePath", message: "must not be empty")
        }
        if redisHost.isEmpty { throw ConfigError(field: "capStore.redisHost", message: "must not be empty") }
        if redisKeyPrefix.isEmpty { throw ConfigError(field: "capStore.redisKeyPrefix", message: "must not be empty") }
        if redisKeyPrefix.contains(where: { $0 == "{" || $0 == "}" }) {
            throw ConfigError(
                field: "capStore.redisKeyPrefix",
                message: "must not contain { or }: the store puts the device in a hash tag")
        }
        if !redisUser.isEmpty && redisPasswordFile.isEmpty {
            throw ConfigError(
                field: "capStore.redisUser", message: "needs capStore.redisPasswordFile (AUTH user password)")
        }
        if redisTimeout <= .zero { throw ConfigError(field: "capStore.redisTimeout", message: "must be positive") }
        if redisReconnectInterval < .zero {
            throw ConfigError(field: "capStore.redisReconnectInterval", message: "must not be negative")
        }
        if !redisTLS {
            for (field, value) in [
                ("redisTLSCAFile", redisTLSCAFile), ("redisTLSCertificateFile", redisTLSCertificateFile),
                ("redisTLSKeyFile", redisTLSKeyFile), ("redisTLSServerName", redisTLSServerName),
            ] where !value.isEmpty {
                throw ConfigError(field: "capStore.\(field)", message: "needs capStore.redisTLS true (TLS is off)")
            }
        }
        if redisTLSCertificateFile.isEmpty != redisTLSKeyFile.isEmpty {
            throw ConfigError(
                field: redisTLSKeyFile.isEmpty ? "capStore.redisTLSKeyFile" : "capStore.redisTLSCertificateFile",
                message: "is required with capStore."
                    + (redisTLSKeyFile.isEmpty ? "redisTLSCertificateFile" : "redisTLSKeyFile")
                    + " (a client certificate and its key go together)")
        }
    }

    /// Opens the configured store. SQLite with `synchronous` full runs on a worker thread
    /// (``BackgroundCapStore``: its fsyncs would stall the loop), which wakes the loop with
    /// `wake` after each commit; the caller makes that wake-up call ``BackgroundCapStore/drainCompletions()``.
    /// - Throws: ``ConfigError`` (`capStore`) when the SQLite file or the Redis password file
    ///   cannot be read; (`capStore.redisTLS...`) when a TLS file cannot be used (Redis itself
    ///   connects lazily).
    func makeStore(loop: UVLoop, wake: @escaping @Sendable () -> Void) throws(ConfigError) -> any CapStore {
        // Read before the store opens: a TLS file that cannot be used names its own setting.
        let tls = type == .redis ? try redisTLSContext() : nil
        do throws(CapStoreError) {
            switch type {
            case .sqlite where sqliteSynchronous == .full:
                return try BackgroundCapStore(store: SQLiteCapStore(path: sqlitePath, synchronous: .full), wake: wake)
            case .sqlite: return try SQLiteCapStore(path: sqlitePath, synchronous: sqliteSynchronous)
            case .redis:
                let credentials = try redisCredentials()
                return RedisCapStore(
                    loop: loop, host: redisHost, port: redisPort, keyPrefix: redisKeyPrefix, timeout: redisTimeout,
                    reconnectInterval: redisReconnectInterval, credentials: credentials, cluster: redisCluster, tls: tls
                )
            case .memory: return InMemoryCapStore()
            }
        } catch {
            throw ConfigError(field: "capStore", message: error.message)
        }
    }

    /// The TLS context of the Redis connections (the files read now); nil with TLS off.
    /// - Throws: ``ConfigError`` naming the `capStore.redisTLS...` setting whose file is
    ///   missing, unreadable, not PEM, or a key that is not the certificate's.
    func redisTLSContext() throws(ConfigError) -> TLSClientContext? {
        guard redisTLS else { return nil }
        func setting(_ value: String) -> String? { value.isEmpty ? nil : value }
        do {
            return try TLSClientContext(
                TLSClientConfiguration(
                    caFile: setting(redisTLSCAFile), certificateFile: setting(redisTLSCertificateFile),
                    keyFile: setting(redisTLSKeyFile), serverName: setting(redisTLSServerName)))
        } catch {
            let field =
                [
                    "caFile": "redisTLSCAFile", "certificateFile": "redisTLSCertificateFile",
                    "keyFile": "redisTLSKeyFile",
                ][
                    error.field] ?? "redisTLS"
            throw ConfigError(field: "capStore.\(field)", message: error.message)
        }
    }

    /// The AUTH credentials from `redisPasswordFile` and `redisUser`; nil without a file.
    /// - Throws: ``CapStoreError`` when the file cannot be read or is empty.
    func redisCredentials() throws(CapStoreError) -> RedisCredentials? {
        guard !redisPasswordFile.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: redisPasswordFile) else {
            throw CapStoreError("redisPasswordFile \(redisPasswordFile): cannot be read")
        }
        let password =
            String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\r")) } ?? ""
        if password.isEmpty { throw CapStoreError("redisPasswordFile \(redisPasswordFile): empty first line") }
        return RedisCredentials(user: redisUser.isEmpty ? nil : redisUser, password: password)
    }
}
