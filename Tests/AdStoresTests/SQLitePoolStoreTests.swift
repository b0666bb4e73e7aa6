import AdLoaderCore
import AdStores
import Foundation
import Testing

/// The pool store: suspensions and notices round-trip, the format is versioned, and an
/// unusable file is refused whole, never read in part.
struct SQLitePoolStoreTests {
    static func temporaryPath() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poolstore-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("pools.sqlite").path
    }

    static func cleanUp(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    static let at = AdInstant(unixMilliseconds: 1_780_000_000_000)

    static var snapshots: [PoolSnapshot] {
        let native = NativeAdContent(
            headline: "Luxury Mars Cruises", body: "Visit the planet. ✨", callToAction: "Book", advertiser: "iponweb",
            icon: AdImage(url: "http://i/icon.png", width: 80, height: 80), image: AdImage(url: "http://i/main.jpg"),
            starRating: 3.8, price: "FREE", store: nil, clickURL: "http://c/",
            impressionTrackers: ["http://t/1", "http://t/2"],
            clickTrackers: [], adChoicesURL: "http://ac/")
        let video = FullScreenCreative(
            media: .videoURL("http://v/1.mp4"), orientation: .portrait, width: 1080, height: 1920,
            reward: .init(type: "coins", amount: -5))
        let demand = PoolSnapshot.Demand(
            averageRate: 1.25, slowRate: 0.1, windowStart: at, windowCount: 7, latencyMilliseconds: 210.5,
            adsPerRequest: 4.5)
        let feed = PoolSnapshot(
            loader: "default", adUnitID: "feed", format: .native, takenAt: at,
            ads: [
                .init(
                    ad: Ad(
                        id: "abc-1", adUnitID: "feed", loader: "default", creative: .native(native), loadedAt: at,
                        expiresAt: at + .seconds(3600), showCount: 0, creativeID: "seat/crid",
                        advertiserDomains: ["mars.example", "cruise.example"], categories: ["IAB20-3"]),
                    sourceState: Array("{\"v\":1}".utf8)),
                .init(
                    ad: Ad(
                        id: "abc-4", adUnitID: "feed", loader: "default", creative: .native(native), loadedAt: at,
                        expiresAt: at + .seconds(3600)),
                    sourceState: []),
            ],
            leases: [
                .init(
                    leaseID: 0xFFF0_0000_0000_0001, slot: "cell/7", expiresAt: at + .seconds(300),
                    pooled: .init(
                        ad: Ad(
                            id: "abc-2", adUnitID: "feed", loader: "default",
                            creative: .native(NativeAdContent(headline: "")),
                            loadedAt: at, expiresAt: at + .seconds(10), showCount: 2)))
            ],
            blockedCreatives: [.sourceID("s/c"): at + .seconds(60), .content(.native(native)): at + .seconds(30)],
            demand: demand, prefetchWanted: 3)
        let rewarded = PoolSnapshot(
            loader: "rw", adUnitID: "rewarded", format: .rewarded, takenAt: at,
            leases: [
                .init(
                    leaseID: 42, slot: nil, expiresAt: at + .seconds(5),
                    pooled: .init(
                        ad: Ad(
                            id: "abc-3", adUnitID: "rewarded", loader: "rw", creative: .fullScreen(video),
                            format: .rewarded,
                            loadedAt: at, expiresAt: at + .seconds(60)),
                        sourceState: [0, 1, 2, 255]))
            ],
            demand: .init(
                averageRate: 0, slowRate: 0, windowStart: at, windowCount: 0, latencyMilliseconds: 1000,
                adsPerRequest: nil))
        var limited = feed
        limited.consentClass = "limited"  // one pool per ad unit and consent class
        limited.leases = []
        return [feed, rewarded, limited]
    }

    static var ads: [PoolSnapshot.PooledAd] { snapshots.flatMap { $0.ads + $0.leases.map(\.pooled) } }

    @Test func aSuspensionRoundTripsByteForByteAndIsTakenOnce() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        let written = Self.snapshots
        do {
            let store = try SQLitePoolStore(path: path)
            let bytes = try store.saveSuspension(written)
            #expect(bytes > 0)
            store.close()
        }
        let store = try SQLitePoolStore(path: path)
        let read = try #require(try store.takeSuspension())
        #expect(read == written, "byte for byte: every field of every pool, ad and lease")
        #expect(try store.takeSuspension() == nil, "taken once: a second start restores nothing")
        store.close()
        #expect(try SQLitePoolStore(path: path).takeSuspension() == nil)
    }

    @Test func aLaterSuspensionReplacesTheEarlierOne() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        let store = try SQLitePoolStore(path: path)
        try store.saveSuspension(Self.snapshots)
        try store.saveSuspension(Array(Self.snapshots.suffix(1)))
        let read = try #require(try store.takeSuspension())
        #expect(read == Array(Self.snapshots.suffix(1)))
    }

    @Test func everyCutOfARecordIsRefusedNeverReadInPart() {
        let records = Self.ads.map { StoreRecordCodec.encode($0.ad, context: $0.sourceState) }
        let pools = Self.snapshots.map(StoreRecordCodec.encodePool)
        for record in records { #expect((try? StoreRecordCodec.decodeAd(record)) != nil) }
        for pool in pools { #expect((try? StoreRecordCodec.decodePool(pool)) != nil) }
        for bytes in records + pools {
            let isPool = pools.contains(bytes)
            func decode(_ bytes: [UInt8]) throws(StoreRecordError) {
                if isPool {
                    _ = try StoreRecordCodec.decodePool(bytes)
                } else {
                    _ = try StoreRecordCodec.decodeAd(bytes)
                }
            }
            for length in 0..<bytes.count {
                #expect(throws: StoreRecordError.self) { try decode(Array(bytes.prefix(length))) }
            }
            #expect(throws: StoreRecordError.self) { try decode(bytes + [0]) }
            var other = bytes
            other[0] = 1  // the version before this one
            #expect(throws: StoreRecordError.self) { try decode(other) }
        }
        // Garbage of every size up to 512 bytes: an error or an ad, never a crash.
        var generator = SystemRandomNumberGenerator()
        for size in 0..<512 {
            let garbage = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? StoreRecordCodec.decodeAd(garbage)
            _ = try? StoreRecordCodec.decodePool(garbage)
        }
    }

    @Test func aCorruptRecordRefusesTheWholeSuspensionAndDeletesIt() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        let store = try SQLitePoolStore(path: path)
        try store.saveSuspension(Self.snapshots)
        store.close()
        try Self.sqlite(path, "UPDATE suspended_ads SET record = x'01ff' WHERE seq = 2")
        let reopened = try SQLitePoolStore(path: path)
        #expect(throws: PoolStoreError.self) { try reopened.takeSuspension() }
        #expect(try reopened.takeSuspension() == nil, "deleted: the next start does not try again")
    }

    @Test func aFileOfAnotherVersionOrNotADatabaseIsMovedAsideAndANewStoreStarts() throws {
        for content in ["version", "garbage"] {
            let path = Self.temporaryPath()
            defer { Self.cleanUp(path) }
            if content == "version" {
                let store = try SQLitePoolStore(path: path)
                store.putNotice(OutboxNotice(id: 1, url: "http://n/1"), source: "rtb")
                store.close()
                try Self.sqlite(path, "PRAGMA user_version = 99")
                #expect(throws: PoolStoreError.self) { try SQLitePoolStore(path: path) }
            } else {
                #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 8192)))
            }
            let (store, unusable) = try SQLitePoolStore.open(path: path, now: Self.at)
            let error = try #require(unusable)
            #expect(error.message.contains("moved aside") && error.message.contains(path))
            #expect(store.pendingNotices(source: "rtb").isEmpty, "never half-restored")
            #expect(FileManager.default.fileExists(atPath: "\(path).unusable-\(Self.at.unixMilliseconds)"))
        }
    }

    @Test func noticesArePutUpdatedAndRemovedPerSource() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        let store = try SQLitePoolStore(path: path)
        store.putNotice(OutboxNotice(id: 2, url: "http://n/2"), source: "a")
        store.putNotice(OutboxNotice(id: 1, url: "http://n/1"), source: "a")
        store.putNotice(OutboxNotice(id: 1, url: "http://n/b1"), source: "b")
        store.putNotice(OutboxNotice(id: 2, url: "http://n/2", attempts: 3), source: "a")
        store.removeNotice(id: 1, source: "a")
        store.close()
        let reopened = try SQLitePoolStore(path: path)
        #expect(reopened.pendingNotices(source: "a") == [OutboxNotice(id: 2, url: "http://n/2", attempts: 3)])
        #expect(reopened.pendingNotices(source: "b").map(\.url) == ["http://n/b1"])
        #expect(reopened.noticeCount() == 2 && reopened.writeFailures == 0)
        reopened.putNotice(OutboxNotice(id: 5, url: "http://n/5", attempts: 1, sending: true), source: "a")
        reopened.close()
        let third = try SQLitePoolStore(path: path)
        #expect(
            third.pendingNotices(source: "a").map(\.sending) == [false, true], "a try under way survives a restart")
    }

    /// A version 1 store (before notices carried `sending`) is upgraded in place: its notices
    /// are kept, as between tries.
    @Test func aVersion1StoreIsUpgradedKeepingItsNotices() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        try Self.sqlite(
            path,
            "CREATE TABLE notices (source TEXT NOT NULL, id INTEGER NOT NULL, url TEXT NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (source, id)) WITHOUT ROWID"
        )
        try Self.sqlite(path, "INSERT INTO notices VALUES ('a', 3, 'http://n/3', 2)")
        try Self.sqlite(path, "PRAGMA application_id=\(0x4144_4C50)")
        try Self.sqlite(path, "PRAGMA user_version=1")
        let store = try SQLitePoolStore(path: path)
        #expect(store.pendingNotices(source: "a") == [OutboxNotice(id: 3, url: "http://n/3", attempts: 2)])
        store.close()
        #expect(try SQLitePoolStore(path: path).pendingNotices(source: "a").count == 1)
    }

    /// A billing notice keeps the device of its show (its forwarded headers) across a restart.
    @Test func aNoticeKeepsTheDeviceOfItsShow() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        let device = ImpressionDevice(ip: "2001:db8::7", userAgent: "Mozilla/5.0 (Linux; Android 14) Feed/3.1 ✓")
        let store = try SQLitePoolStore(path: path)
        store.putNotice(OutboxNotice(id: 1, url: "http://n/bill", device: device), source: "a")
        store.putNotice(OutboxNotice(id: 2, url: "http://n/loss"), source: "a")
        // A failed try stores the notice again: its device stays.
        store.putNotice(OutboxNotice(id: 1, url: "http://n/bill", attempts: 1, device: device), source: "a")
        store.close()
        let reopened = try SQLitePoolStore(path: path)
        #expect(
            reopened.pendingNotices(source: "a") == [
                OutboxNotice(id: 1, url: "http://n/bill", attempts: 1, device: device),
                OutboxNotice(id: 2, url: "http://n/loss"),
            ])
    }

    /// A version 2 store (notices without a device) is upgraded in place to this version: its
    /// notices are kept, without a device, and new ones keep theirs.
    @Test func aVersion2StoreIsUpgradedKeepingItsNotices() throws {
        let path = Self.temporaryPath()
        defer { Self.cleanUp(path) }
        try Self.sqlite(
            path,
            "CREATE TABLE notices (source TEXT NOT NULL, id INTEGER NOT NULL, url TEXT NOT NULL, attempts INTEGER NOT NULL, sending INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (source, id)) WITHOUT ROWID"
        )
        try Self.sqlite(path, "INSERT INTO notices VALUES ('a', 3, 'http://n/3', 2, 1)")
        try Self.sqlite(path, "PRAGMA application_id=\(0x4144_4C50)")
        try Self.sqlite(path, "PRAGMA user_version=2")
        let store = try SQLitePoolStore(path: path)
        #expect(
            store.pendingNotices(source: "a") == [OutboxNotice(id: 3, url: "http://n/3", attempts: 2, sending: true)])
        let device = ImpressionDevice(ip: "192.0.2.1", userAgent: "UA")
        store.putNotice(OutboxNotice(id: 4, url: "http://n/4", device: device), source: "a")
        store.close()
        let reopened = try SQLitePoolStore(path: path)
        #expect(reopened.pendingNotices(source: "a").map(\.device) == [ImpressionDevice(), device])
        reopened.close()
        try Self.sqlite(path, "PRAGMA user_version=4")
        #expect(throws: PoolStoreError.self) { try SQLitePoolStore(path: path) }
    }

    /// Runs one statement with the sqlite3 shell's library through Foundation's Process.
    static func sqlite(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()",
            path, sql,
        ]
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw StoreRecordError("sqlite \(sql) failed") }
    }
}
