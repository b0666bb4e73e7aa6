import AdLoaderCore
import AdLoaderTestSupport
import AdStores
import Foundation
import Testing

/// The shared cap-store behaviour against a SQLite file, and what is SQLite's own.
struct SQLiteCapStoreTests {
    static func temporaryPath() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("adstores-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("caps.sqlite").path
    }

    @Test(arguments: CapStoreBehaviour.names)
    func behaviour(_ name: String) {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let failures = CapStoreBehaviour.run(name, persistent: true) { try SQLiteCapStore(path: path) }
        #expect(failures == [])
    }

    @Test(arguments: SQLiteCapStore.Synchronous.allCases)
    func theFileIsInWALModeWithTheSynchronousSetting(synchronous: SQLiteCapStore.Synchronous) throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteCapStore(path: path, synchronous: synchronous)
        let key = CapKey(
            loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(daysSinceEpoch: 20_788), utcOffsetSeconds: 0)
        var result: Result<AppOpenCounts, CapStoreError>?
        store.confirmShow(for: key, at: AdInstant(unixMilliseconds: 1_796_119_200_000), sessionTimeout: .seconds(60)) {
            result = $0
        }
        #expect(result == .success(AppOpenCounts(session: 1, day: 1)))
        // WAL mode leaves its -wal file beside the database while a connection is open.
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        store.close()
    }

    @Test func aPathThatCannotBeOpenedIsAClearError() {
        #expect(throws: CapStoreError.self) { try SQLiteCapStore(path: "/nonexistent-dir/x/caps.sqlite") }
        do {
            _ = try SQLiteCapStore(path: "/nonexistent-dir/x/caps.sqlite")
        } catch {
            #expect(error.message.hasPrefix("sqlite /nonexistent-dir/x/caps.sqlite: "))
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try Data(repeating: 0x41, count: 4_096).write(to: URL(fileURLWithPath: path))
        #expect(throws: CapStoreError.self) { try SQLiteCapStore(path: path) }
    }

    @Test func identifiersWithQuotesNULsAndUnicodeAreKeptApart() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteCapStore(path: path)
        defer { store.close() }
        let now = AdInstant(unixMilliseconds: 1_796_119_200_000)
        let day = LocalDay(at: now, utcOffsetSeconds: 0)
        let devices = [
            "a'; DROP TABLE app_open_days; --", "a", "a\u{0}b", "a\u{0}c", "é", String(repeating: "x", count: 10_000),
        ]
        for (i, device) in devices.enumerated() {
            for _ in 0...i {
                store.confirmShow(
                    for: CapKey(loader: "l", deviceID: device, sessionID: "s", day: day, utcOffsetSeconds: 0), at: now,
                    sessionTimeout: .seconds(60)
                ) { _ in }
            }
        }
        for (i, device) in devices.enumerated() {
            var result: Result<AppOpenCounts, CapStoreError>?
            store.counts(
                for: CapKey(loader: "l", deviceID: device, sessionID: "s", day: day, utcOffsetSeconds: 0), at: now,
                sessionTimeout: .seconds(60)
            ) { result = $0 }
            #expect(result == .success(AppOpenCounts(session: i + 1, day: i + 1)), "device \(i)")
        }
    }
}
