public import AdLoaderCore

#if canImport(Glibc)
    import Glibc
#endif

/// The pool store's journal: every change of every pool (an ad arrived, was lent, came back,
/// left) appended to a file next to the SQLite store, so that after `kill -9` the next start
/// rebuilds the pools as they were when their last answers left (``PoolJournalReplay``).
///
/// Changes are collected in memory during a loop pass (``record(_:)``) and written as one
/// frame by ``commit()``, which the daemon calls right before any answer is handed to a
/// socket (``ServerContext/beforeAnswersLeave``), before a notice is stored, and once at the
/// end of every loop pass. One `write(2)` per commit, no `fsync`: the bytes are in the page
/// cache when it returns, so they survive the process being killed (not a power loss: the
/// same promise as the SQLite store's `synchronous=NORMAL`).
///
/// The journal starts with a checkpoint (``checkpoint(_:)``: the whole state as records,
/// written to a new file and renamed over the old one) and is checkpointed again when what
/// was appended since passes both ``compactionBytes`` and the checkpoint's own size (so a
/// big pool is not rewritten over and over: at most half the file is history).
///
/// - Important: loop-confined.
public final class PoolJournal {
    public let path: String
    /// A checkpoint is due when this many bytes (and at least the last checkpoint's size)
    /// were appended since it.
    public var compactionBytes: Int
    /// The size of the last checkpoint.
    public private(set) var checkpointBytes = 0
    private var descriptor: Int32 = -1
    @exclusivity(unchecked) private var pending = StoreRecordWriter()
    @exclusivity(unchecked) private var frame: [UInt8] = []
    @exclusivity(unchecked) public private(set) var hasPending = false
    /// Bytes in the file now.
    public private(set) var fileBytes = 0
    /// Frames written since the start, and their bytes.
    public private(set) var commits: UInt64 = 0
    public private(set) var committedBytes: UInt64 = 0
    public private(set) var checkpoints: UInt64 = 0
    public private(set) var writeFailures: UInt64 = 0
    public private(set) var lastError: PoolStoreError?
    /// Called with each write failure (the daemon logs it, rate-limited).
    public var onWriteFailure: ((PoolStoreError) -> Void)?
    /// Called when the file passed ``compactionBytes``: the daemon answers with a checkpoint of
    /// the loader's pools.
    public var onCompactionDue: (() -> Void)?
    /// The time each frame carries.
    private let now: () -> AdInstant

    /// - Parameters:
    ///   - path: the file; not opened until ``checkpoint(_:)``.
    ///   - compactionBytes: see ``compactionBytes``.
    ///   - now: the time written in each frame (the loop's clock).
    public init(path: String, compactionBytes: Int = 64 << 20, now: @escaping () -> AdInstant) {
        self.path = path
        self.compactionBytes = compactionBytes
        self.now = now
    }

    deinit { close() }

    public func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Reads the journal a previous run left: nil when there is none.
    /// - Throws: ``PoolStoreError`` `.unreadable` when the file cannot be read or is no journal.
    public static func read(path: String) throws(PoolStoreError) -> PoolJournalReplay? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw PoolStoreError(.unreadable, "pool journal \(path): \(String(cString: strerror(errno)))")
        }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PoolStoreError(.unreadable, "pool journal \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        do {
            return try PoolJournalReplay(file: bytes)
        } catch {
            throw PoolStoreError(.unreadable, "pool journal \(path): \(error.message)")
        }
    }

    /// Removes the file (after a clean stop suspended the pools into SQLite).
    public func remove() {
        close()
        pending.removeAll()
        hasPending = false
        unlink(path)
        fileBytes = 0
    }

    /// Notes one change; written by the next ``commit()``.
    @inline(__always)
    public func record(_ change: PoolJournalRecord) {
        if !hasPending {
            hasPending = true
            pending.signed(now().unixMilliseconds)
        }
        change.write(into: &pending)
    }

    /// Writes the changes noted since the last commit as one frame: before answers leave.
    @inline(__always)
    public func commit() {
        guard hasPending else { return }
        writePending()
    }

    private func writePending() {
        hasPending = false
        frame.removeAll(keepingCapacity: true)
        PoolJournalRecord.appendFrame(pending.bytes, to: &frame)
        pending.removeAll()
        guard descriptor >= 0 else { return }
        if let error = Self.writeAll(descriptor, frame) {
            // A frame written in part would end every later replay there: cut it off.
            _ = ftruncate(descriptor, off_t(fileBytes))
            _ = lseek(descriptor, off_t(fileBytes), SEEK_SET)
            failed(PoolStoreError(.io, "pool journal \(path): write: \(error)"))
            return
        }
        commits += 1
        committedBytes += UInt64(frame.count)
        fileBytes += frame.count
        let appended = fileBytes - checkpointBytes
        if appended > compactionBytes && appended > checkpointBytes { onCompactionDue?() }
    }

    /// Replaces the journal with one holding `snapshots` (every ad and lease) as of now:
    /// written to `path.new`, then renamed over the journal, so a crash at any point leaves
    /// either the old journal or the new one whole. Changes noted before are dropped (the
    /// snapshots contain them).
    /// - Returns: the bytes written.
    /// - Throws: ``PoolStoreError`` `.io`; the old journal stays then.
    @discardableResult
    public func checkpoint(_ snapshots: [PoolSnapshot]) throws(PoolStoreError) -> Int {
        pending.removeAll()
        hasPending = false
        var file = PoolJournalRecord.fileMagic
        // One frame per pool keeps frames (and the memory to build one) small.
        var writer = StoreRecordWriter()
        let time = now().unixMilliseconds
        for snapshot in snapshots {
            writer.removeAll()
            writer.signed(time)
            for pooled in snapshot.ads + snapshot.leases.map(\.pooled) {
                PoolJournalRecord.arrived(
                    consentClass: snapshot.consentClass,
                    record: StoreRecordCodec.encode(pooled.ad, context: pooled.sourceState)
                ).write(into: &writer)
            }
            for lease in snapshot.leases {
                PoolJournalRecord.leased(
                    adID: lease.pooled.ad.id, leaseID: lease.leaseID, slot: lease.slot, expiresAt: lease.expiresAt
                ).write(into: &writer)
            }
            PoolJournalRecord.appendFrame(writer.bytes, to: &file)
        }
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw PoolStoreError(.io, "pool journal \(temporary): \(String(cString: strerror(errno)))")
        }
        if let error = Self.writeAll(fd, file) {
            _ = Glibc.close(fd)
            unlink(temporary)
            throw PoolStoreError(.io, "pool journal \(temporary): write: \(error)")
        }
        guard rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            unlink(temporary)
            throw PoolStoreError(.io, "pool journal \(path): rename: \(message)")
        }
        close()
        descriptor = fd
        _ = lseek(fd, 0, SEEK_END)
        fileBytes = file.count
        checkpointBytes = file.count
        checkpoints += 1
        return file.count
    }

    private func failed(_ error: PoolStoreError) {
        writeFailures += 1
        lastError = error
        onWriteFailure?(error)
    }

    /// Writes all of `bytes` (retrying short writes and EINTR); the error text, or nil.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            return nil
        }
    }
}
