import AdLoaderCore
import AdLoaderTestSupport
import AdStores
import Foundation
import Testing

/// SQLite on a worker thread (synchronous FULL off the loop): the shared behaviour, group
/// commit, and a close that finishes what was submitted. The worker wakes the test as it
/// would wake the loop; the test waits for that, bounded.
struct BackgroundCapStoreTests {
    /// What the loop would do: wait for a wake-up (at most 10 s), then run the completions.
    final class Loop: @unchecked Sendable {
        // @unchecked: the semaphore is thread-safe; `stores` is set and used on the test's thread.
        let woken = DispatchSemaphore(value: 0)
        var stores: [BackgroundCapStore] = []
        var store: BackgroundCapStore? {
            get { stores.last }
            set { if let newValue { stores.append(newValue) } }
        }

        /// Waits (at most 10 s) until some store has committed, then runs every completion ready.
        func settle() {
            _ = woken.wait(timeout: .now() + 10)
            for store in stores { store.drainCompletions() }
        }
    }

    @Test(arguments: CapStoreBehaviour.names)
    func behaviour(_ name: String) {
        let path = SQLiteCapStoreTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let loop = Loop()
        let failures = CapStoreBehaviour.run(name, persistent: true, settle: loop.settle) {
            let store = try BackgroundCapStore(store: SQLiteCapStore(path: path, synchronous: .full)) { [loop] in
                loop.woken.signal()
            }
            loop.store = store
            return store
        }
        #expect(failures == [])
    }

    @Test func callsWaitingDuringACommitShareTheNextOneAndAnswerInOrder() throws {
        let path = SQLiteCapStoreTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let loop = Loop()
        let store = try BackgroundCapStore(store: SQLiteCapStore(path: path, synchronous: .full)) { [loop] in
            loop.woken.signal()
        }
        loop.store = store
        let now = AdInstant(unixMilliseconds: 1_796_119_200_000)
        let key = CapKey(
            loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(at: now, utcOffsetSeconds: 0), utcOffsetSeconds: 0
        )
        var answers: [AppOpenCounts] = []
        for _ in 0..<200 {
            store.confirmShow(for: key, at: now, sessionTimeout: .seconds(60)) {
                answers.append((try? $0.get()) ?? AppOpenCounts())
            }
        }
        #expect(answers.isEmpty, "completions ran off the loop's drain")
        for _ in 0..<200 where store.pendingCount > 0 { loop.settle() }
        #expect(answers.map(\.day) == Array(1...200))
        // 200 confirms submitted at once: far fewer transactions (fsyncs) than calls.
        #expect(store.batchCount < 200)
        store.close()
    }

    @Test func closeFinishesWhatWasSubmittedAndLaterCallsFailAtOnce() throws {
        let path = SQLiteCapStoreTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try BackgroundCapStore(store: SQLiteCapStore(path: path, synchronous: .full)) {}
        let now = AdInstant(unixMilliseconds: 1_796_119_200_000)
        let key = CapKey(
            loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(at: now, utcOffsetSeconds: 0), utcOffsetSeconds: 0
        )
        var first: Result<AppOpenCounts, CapStoreError>?
        store.confirmShow(for: key, at: now, sessionTimeout: .seconds(60)) { first = $0 }
        store.close()
        #expect(first == .success(AppOpenCounts(session: 1, day: 1)))
        var later: Result<AppOpenCounts, CapStoreError>?
        store.counts(for: key, at: now, sessionTimeout: .seconds(60)) { later = $0 }
        #expect(later == .failure(CapStoreError("sqlite \(path): store closed")))
        // The show was committed: a new store reads it.
        let reopened = try SQLiteCapStore(path: path)
        var read: Result<AppOpenCounts, CapStoreError>?
        reopened.counts(for: key, at: now, sessionTimeout: .seconds(60)) { read = $0 }
        #expect(read == .success(AppOpenCounts(session: 1, day: 1)))
        reopened.close()
    }
}
