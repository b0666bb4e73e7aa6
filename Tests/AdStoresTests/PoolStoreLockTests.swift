import AdStores
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two daemons never share one pool store: the second lock on a store is refused, naming the
/// store and the holder's pid, and the lock is free again once its holder lets go.
struct PoolStoreLockTests {
    @Test func aSecondLockOnOneStoreIsRefusedNamingTheFileAndTheHolder() throws {
        let path = SQLitePoolStoreTests.temporaryPath()
        defer { SQLitePoolStoreTests.cleanUp(path) }
        let first = try PoolStoreLock(storePath: path, pid: 4242)
        // flock(2) locks belong to the open file: a second open in the same process is refused
        // as another process would be.
        do {
            _ = try PoolStoreLock(storePath: path, pid: 77)
            Issue.record("a second lock on one store was granted")
        } catch {
            #expect(error.code == .locked)
            #expect(error.message.contains(path))
            #expect(error.message.contains("pid 4242"))
            #expect(!error.message.contains("\n"))
        }
        first.release()
        let again = try PoolStoreLock(storePath: path, pid: 78)
        #expect(try String(contentsOfFile: path + ".lock", encoding: .utf8) == "78\n")
        again.release()
    }

    @Test func anotherStoreIsNotLocked() throws {
        let path = SQLitePoolStoreTests.temporaryPath()
        let other = SQLitePoolStoreTests.temporaryPath()
        defer {
            SQLitePoolStoreTests.cleanUp(path)
            SQLitePoolStoreTests.cleanUp(other)
        }
        let first = try PoolStoreLock(storePath: path)
        let second = try PoolStoreLock(storePath: other)
        first.release()
        second.release()
    }

    @Test func aLockFileThatCannotBeMadeIsAnIOErrorNotALock() {
        do {
            _ = try PoolStoreLock(storePath: "/nonexistent-dir-\(UUID().uuidString)/pools.sqlite")
            Issue.record("a lock in a missing directory was granted")
        } catch {
            #expect(error.code == .io)
        }
    }
}
