import AdLoaderCore
import AdLoaderTLS
import AdLoaderUV
import AdStores
import Foundation

/// A libuv loop for the Redis store's tests: opens stores on it, runs it until every store
/// has answered (bounded: each call ends by its reply or the store's own reply timer, and
/// the whole wait by 10 s of wall time), and closes everything at the end.
final class StoreLoop {
    let loop: UVLoop
    private(set) var stores: [RedisCapStore] = []

    init() throws { loop = try UVLoop() }

    func open(
        port: Int, host: String = "127.0.0.1", keyPrefix: String = "adloader:appopen",
        timeout: Duration = .milliseconds(500),
        reconnectInterval: Duration = .seconds(1), credentials: RedisCredentials? = nil, cluster: Bool = false,
        tls: TLSClientContext? = nil
    ) -> RedisCapStore {
        let store = RedisCapStore(
            loop: loop, host: host, port: port, keyPrefix: keyPrefix, timeout: timeout,
            reconnectInterval: reconnectInterval,
            credentials: credentials, cluster: cluster, tls: tls)
        stores.append(store)
        return store
    }

    /// Runs the loop until no store has a call pending (at most 10 s).
    func settle() {
        let deadline = UVLoop.highResolutionNanoseconds + 10_000_000_000
        while stores.contains(where: { $0.pendingCalls > 0 }) && UVLoop.highResolutionNanoseconds < deadline {
            loop.runOnce()
        }
    }

    /// Calls `store` and settles; nil when it did not answer within the bound.
    func call(
        _ store: RedisCapStore, _ key: CapKey, at now: AdInstant, confirm: Bool = false,
        sessionTimeout: Duration = .seconds(60)
    ) -> Result<AppOpenCounts, CapStoreError>? {
        var result: Result<AppOpenCounts, CapStoreError>?
        if confirm {
            store.confirmShow(for: key, at: now, sessionTimeout: sessionTimeout) { result = $0 }
        } else {
            store.counts(for: key, at: now, sessionTimeout: sessionTimeout) { result = $0 }
        }
        if result == nil { settle() }
        return result
    }

    /// Closes every store and the loop; true when the loop closed cleanly (no handle left).
    @discardableResult
    func finish() -> Bool {
        for store in stores { store.close() }
        _ = loop.runUntilIdle()
        let left = loop.closeRemainingHandles()
        do { try loop.close() } catch { return false }
        return left.isEmpty
    }
}

extension RedisServer {
    /// `redis-cli -p PORT ARGS...`'s output, trimmed.
    static func cli(port: Int, tls: TestCertificates? = nil, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        p.arguments = ["-p", String(port)] + (tls?.cliArguments ?? []) + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func cli(_ arguments: [String]) throws -> String { try Self.cli(port: port, tls: tls, arguments) }
}
