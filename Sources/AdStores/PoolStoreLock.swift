#if canImport(Glibc)
    import Glibc
#endif

/// The lock that keeps two daemons off one pool store: an exclusive `flock(2)` on `PATH.lock`
/// (next to the store), held from before the store is opened until the daemon exits, with the
/// holder's pid written in the file so that the one refused can name it.
///
/// Two daemons on one store would each restore the same suspension or replay the same journal
/// and lend the same ads twice; the second one therefore refuses to start. The kernel drops
/// the lock when its holder exits, however it exits (`kill -9` included), so a crash never
/// leaves a stale lock behind; the file itself stays (removing it would let a third daemon
/// lock a new file while the second still holds the old one).
public final class PoolStoreLock {
    /// The lock file: the store's path plus `.lock`.
    public let path: String
    private var descriptor: Int32

    /// Takes the lock for the store at `storePath`, without waiting.
    /// - Parameter pid: written in the lock file for the next one to name; nil: this process's.
    /// - Throws: ``PoolStoreError`` `.locked` when another process holds it (the message names
    ///   the store and the holder's pid), `.io` when the lock file cannot be made.
    public init(storePath: String, pid: Int32? = nil) throws(PoolStoreError) {
        path = storePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw PoolStoreError(.io, "pool store lock \(path): \(String(cString: strerror(errno)))")
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let holder = Self.readPID(fd)
            _ = close(fd)
            if code == EWOULDBLOCK {
                throw PoolStoreError(
                    .locked,
                    "pool store \(storePath) is in use by another adloaderd (\(holder.map { "pid \($0)" } ?? "pid unknown"), lock \(path)): each daemon needs its own poolStore.sqlitePath"
                )
            }
            throw PoolStoreError(.io, "pool store lock \(path): flock: \(String(cString: strerror(code)))")
        }
        descriptor = fd
        let text = Array("\(pid ?? getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        let written = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        if written != text.count {
            let message = String(cString: strerror(errno))
            release()
            throw PoolStoreError(.io, "pool store lock \(path): write: \(message)")
        }
    }

    deinit { release() }

    /// Drops the lock (the daemon's last stop; exiting drops it too).
    public func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        _ = close(descriptor)
        descriptor = -1
    }

    /// The pid in a lock file, nil when it holds none (its holder had not written it yet).
    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return Int32(text.prefix { $0 != "\n" })
    }
}
