import AdLoaderCore
import Foundation
import Testing

@testable import AdStores

/// The Redis pool store against a real redis-server started by each test: a suspension and
/// the notices round-trip byte for byte under the instance's key, a taken suspension is gone,
/// every cut or flipped blob is refused whole, and Redis down or AUTH refused fail the open.
@Suite(.serialized)
struct RedisPoolStoreTests {
    static let key = "adloader:pools:{127.0.0.1:7421}"

    static func store(_ server: RedisServer, password: String? = nil) throws(PoolStoreError) -> RedisPoolStore {
        try RedisPoolStore(
            host: "127.0.0.1", port: server.port, key: key, timeout: .seconds(2),
            credentials: password.map { RedisCredentials(password: $0) })
    }

    @Test func aSuspensionAndTheNoticesRoundTripUnderTheInstancesKeyAndAreTakenOnce() throws {
        let server = try RedisServer()
        let written = SQLitePoolStoreTests.snapshots
        do {
            let first = try Self.store(server)
            #expect(try first.loadSuspension() == nil && first.noticeCount() == 0, "an empty key: nothing")
            first.putNotice(OutboxNotice(id: 2, url: "http://n/2", attempts: 3), source: "a")
            first.putNotice(OutboxNotice(id: 1, url: "http://n/1"), source: "a")
            first.putNotice(OutboxNotice(id: 9, url: "http://n/b9", sending: true), source: "b")
            first.removeNotice(id: 1, source: "a")
            #expect(try first.saveSuspension(written) > 1_000)
            first.close()
        }
        let second = try Self.store(server)
        #expect(try second.loadSuspension() == written, "byte for byte: every field of every pool, ad and lease")
        #expect(second.pendingNotices(source: "a") == [OutboxNotice(id: 2, url: "http://n/2", attempts: 3)])
        #expect(second.pendingNotices(source: "b") == [OutboxNotice(id: 9, url: "http://n/b9", sending: true)])
        try second.deleteSuspension()
        #expect(try second.loadSuspension() == nil)
        second.close()
        let third = try Self.store(server)
        #expect(try third.loadSuspension() == nil, "taken once: a second start restores nothing")
        #expect(third.noticeCount() == 0)
    }

    /// A notice keeps the device of its show in the blob; a version 1 blob (no device) is
    /// still read, its notices without one.
    @Test func aNoticeKeepsItsDeviceAndAVersion1BlobIsStillRead() throws {
        let device = ImpressionDevice(ip: "198.51.100.4", userAgent: "Feed/2 (iPhone)")
        let notices = [
            "a": [
                UInt64(1): OutboxNotice(id: 1, url: "http://n/1", attempts: 2, device: device),
                2: OutboxNotice(id: 2, url: "http://n/2", sending: true),
            ]
        ]
        let decoded = try RedisPoolStore.decode(RedisPoolStore.encode([], notices: notices))
        #expect(decoded.notices.map(\.1) == [notices["a"]![1]!, notices["a"]![2]!])
        // Version 1: the byte, one notice (source "a", id 5, url "u", 1 attempt, not sending), no pools.
        let version1: [UInt8] = [1, 1, 1, 0x61, 5, 1, 0x75, 1, 0, 0]
        let old = try RedisPoolStore.decode(version1)
        #expect(old.notices.map(\.0) == ["a"] && old.notices.map(\.1) == [OutboxNotice(id: 5, url: "u", attempts: 1)])
        #expect(old.snapshots.isEmpty)
    }

    @Test func everyCutOrFlippedBlobIsRefusedWholeNeverReadInPart() throws {
        let notices = ["a": [UInt64(7): OutboxNotice(id: 7, url: "http://n/7", attempts: 1)]]
        let blob = RedisPoolStore.encode(SQLitePoolStoreTests.snapshots, notices: notices)
        let decoded = try RedisPoolStore.decode(blob)
        #expect(decoded.snapshots == SQLitePoolStoreTests.snapshots && decoded.notices.map(\.1.id) == [7])
        for length in 0..<blob.count {
            #expect(throws: StoreRecordError.self) { try RedisPoolStore.decode(Array(blob.prefix(length))) }
        }
        #expect(throws: StoreRecordError.self) { try RedisPoolStore.decode(blob + [0]) }
        var other = blob
        other[0] = 3  // a later format
        #expect(throws: StoreRecordError.self) { try RedisPoolStore.decode(other) }
        // Huge counts up front: refused, not allocated.
        #expect(throws: StoreRecordError.self) { try RedisPoolStore.decode([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
        var generator = SystemRandomNumberGenerator()
        for size in 0..<512 {
            let garbage = [1] + (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? RedisPoolStore.decode(garbage)
        }
        // In Redis: a blob that does not decode opens the store, and its load says why.
        let server = try RedisServer()
        let writer = try Self.store(server)
        _ = try writer.saveSuspension(SQLitePoolStoreTests.snapshots)
        writer.close()
        let cut = try Self.store(server)
        _ = try cut.command(["SET", Self.key], blob: Array(blob.prefix(blob.count / 2)))
        cut.close()
        let reader = try Self.store(server)
        #expect(throws: PoolStoreError.self) { try reader.loadSuspension() }
    }

    @Test func redisDownOrAuthRefusedFailTheOpenWithTheReason() throws {
        let dead = try RedisServer.freePort()
        do {
            _ = try RedisPoolStore(host: "127.0.0.1", port: dead, key: Self.key, timeout: .seconds(1), credentials: nil)
            Issue.record("opened a store on a port where nothing listens")
        } catch {
            #expect(error.code == .io && error.message.contains("cannot connect"), "\(error)")
        }
        let server = try RedisServer(extraArguments: ["--requirepass", "secret"])
        do {
            _ = try Self.store(server, password: "wrong")
            Issue.record("opened with a wrong password")
        } catch {
            #expect(error.message.contains("AUTH refused"), "\(error)")
        }
        let store = try Self.store(server, password: "secret")
        #expect(try store.saveSuspension([]) > 0)
    }

    /// Redis ends the store's connection while the daemon serves (its `timeout` for idle
    /// clients, a restart, a failover): the connection made at the start is not used again at
    /// the stop, and the suspension is written.
    @Test func theStopWritesTheSuspensionAfterRedisEndedTheStartsConnection() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let store = try Self.store(server)
        defer { store.close() }
        // Redis closes every client but the caller (as its idle-client timeout would): the
        // store's, had it kept the start's connection.
        _ = try server.cli(["CLIENT", "KILL", "TYPE", "normal"])
        #expect(try store.saveSuspension(SQLitePoolStoreTests.snapshots) > 1_000)
        // A restart of Redis between the start and the stop, likewise.
        server.stop()
        try server.start()
        #expect(try store.saveSuspension(SQLitePoolStoreTests.snapshots) > 1_000)
        #expect(try server.cli(["EXISTS", Self.key]) == "1")
    }
}
