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
/// written to a new file and renamed over the old one) and is compacted when what was
/// appended since passes both ``compactionBytes`` and the checkpoint's own size (so a big
/// pool is not rewritten over and over: at most half the file is history).
///
/// A compaction (``startCompaction(from:)``) runs on a thread of its own, so that a journal of
/// 100,000 ads does not hold the loop for the seconds its rewrite takes: the thread writes the
/// pools as a checkpoint to `path.new` — the loader's snapshots when the loop handed them over
/// (pools small enough to copy on the loop: nothing to replay), else the state the file
/// describes as it was (every whole frame up to that moment), replayed
/// (``PoolJournalReplay``); meanwhile the loop keeps
/// appending its frames to the journal, and the thread copies them from the journal to
/// `path.new` after the checkpoint, then writes `path.new` to the disk (`fdatasync`) and
/// copies what came meanwhile. When the thread is done it calls `wake`; on the loop,
/// ``finishCompaction()`` copies the last frames (read back from the journal: the loop keeps
/// no copy) and renames `path.new` over the journal. The loop's part is bounded: at most
/// ``loopTailLimit`` bytes to copy (more, and a thread catches up first) and a rename with
/// nothing left to flush. A crash at any point leaves the old journal whole, or the new one
/// whole.
///
/// - Important: loop-confined, except the compaction's thread, which touches only the files
///   and the values handed to it.
public final class PoolJournal {
    public let path: String
    /// A checkpoint is due when this many bytes (and at least the last checkpoint's size)
    /// were appended since it.
    public var compactionBytes: Int
    /// The size of the last checkpoint.
    public private(set) var checkpointBytes = 0
    private var descriptor: Int32 = -1
    /// The frame being built: 8 header bytes (filled in by the commit), the pass's time, its records.
    @exclusivity(unchecked) private var pending = StoreRecordWriter()
    /// A reusable buffer for an arriving ad's encoding.
    @exclusivity(unchecked) private var scratch = StoreRecordWriter()
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
    /// Called on the compaction's thread when it is done (the daemon's `uv_async_send`); the
    /// loop then calls ``finishCompaction()``.
    private let wake: @Sendable () -> Void
    /// The compaction under way and its thread (the whole compaction, or a catch-up round).
    private var compaction: Compaction?
    private var compactionThread = pthread_t()
    /// False once a journal write failed during the compaction: a frame cut off the journal
    /// may have been copied in part.
    private var tailComplete = true
    /// The most the loop copies itself when it finishes a compaction (the frames appended since
    /// the thread's last copy); more, and a thread copies them first. 256 KiB: well under a
    /// millisecond from the page cache.
    public var loopTailLimit = 256 << 10

    /// - Parameters:
    ///   - path: the file; not opened until ``checkpoint(_:)``.
    ///   - compactionBytes: see ``compactionBytes``.
    ///   - now: the time written in each frame (the loop's clock).
    ///   - wake: called on the compaction's thread when it is done; the loop then calls
    ///     ``finishCompaction()``.
    public init(
        path: String, compactionBytes: Int = 64 << 20, now: @escaping () -> AdInstant,
        wake: @escaping @Sendable () -> Void = {}
    ) {
        self.path = path
        self.compactionBytes = compactionBytes
        self.now = now
        self.wake = wake
    }

    deinit { close() }

    /// Closes the file; a compaction under way is waited for and dropped (its `path.new`
    /// removed): the journal stays as it is.
    public func close() {
        abandonCompaction()
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
        if !hasPending { beginFrame() }
        change.write(into: &pending)
    }

    /// Notes the change a loader event makes (nothing for one that changes nothing kept),
    /// written straight into the frame: the per-call path.
    /// - Returns: whether it began the pass's frame (nothing was noted since the last commit):
    ///   the caller then makes sure a commit comes at the end of the pass. (One call for both:
    ///   reading ``hasPending`` from another module is a dynamic exclusivity check per event.)
    @discardableResult
    public func record(_ event: AdEvent) -> Bool {
        let first = !hasPending
        if first { beginFrame() }
        guard PoolJournalRecord.write(event, into: &pending, scratch: &scratch) else {
            if first {
                pending.removeAll()
                hasPending = false
            }
            return false
        }
        return first
    }

    private func beginFrame() {
        hasPending = true
        pending.removeAll()
        pending.reserve(8)
        pending.signed(now().unixMilliseconds)
    }

    /// Writes the changes noted since the last commit as one frame: before answers leave.
    @inline(__always)
    public func commit() {
        guard hasPending else { return }
        writePending()
    }

    private func writePending() {
        hasPending = false
        // The header in place: no copy of the frame.
        let length = pending.count - 8
        let sum = pending.bytes.withUnsafeBytes {
            PoolJournalRecord.checksum(UnsafeRawBufferPointer(rebasing: $0[8...]))
        }
        pending.setUInt32(UInt32(length), at: 0)
        pending.setUInt32(sum, at: 4)
        let frameBytes = pending.count
        // No copy of `pending.bytes` outlives this pass: the buffer is reused by the next frame
        // (a compaction under way reads the frames back from the file).
        let error = descriptor >= 0 ? Self.writeAll(descriptor, pending.bytes) : nil
        pending.removeAll()
        guard descriptor >= 0 else { return }
        if let error {
            // A frame written in part would end every later replay there: cut it off.
            _ = ftruncate(descriptor, off_t(fileBytes))
            _ = lseek(descriptor, off_t(fileBytes), SEEK_SET)
            if compaction != nil { tailComplete = false }
            failed(PoolStoreError(.io, "pool journal \(path): write: \(error)"))
            return
        }
        commits += 1
        committedBytes += UInt64(frameBytes)
        fileBytes += frameBytes
        if compaction != nil { return }
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
        abandonCompaction()
        pending.removeAll()
        hasPending = false
        let file = Self.checkpointFile(snapshots, time: now().unixMilliseconds)
        let temporary = path + ".new"
        // Readable too: a compaction's end reads the last frames back (``finishCompaction()``).
        let fd = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
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

    /// A journal file holding `snapshots` (every ad and lease), its frames stamped `time`.
    static func checkpointFile(_ snapshots: [PoolSnapshot], time: Int64) -> [UInt8] {
        var file = PoolJournalRecord.fileMagic
        // One frame per pool keeps frames (and the memory to build one) small.
        var writer = StoreRecordWriter()
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
        return file
    }

    /// A compaction of the journal's first `bytes` bytes, run by a thread of its own (``main()``):
    /// the compaction (``run()``), then what the loop asks next (``Command``): a catch-up round
    /// when it finds too much appended since to copy in one pass, or closing the replaced
    /// journal and ending. The loop never creates or joins a thread when it finishes the
    /// compaction: a thread's start maps its stack, and its end unmaps its memory, each of
    /// which waits for the other's mapping changes (milliseconds, measured).
    ///
    /// `@unchecked Sendable`: `finished` and `command` are read and written only with `mutex`
    /// held; the other `var`s are written by the thread before it sets `finished`, and read or
    /// written by the loop only while `finished` is set (the thread then waits for a command);
    /// the `let`s are immutable.
    private final class Compaction: @unchecked Sendable {
        /// The reads and copies of the journal go through one buffer of this size: the thread's
        /// memory stays the pools' state plus a few of these, whatever the journal's size.
        static let chunkBytes = 256 << 10
        let path: String
        let bytes: Int
        /// The pools as of `bytes` (``startCompaction(from:)``), written instead of a replay;
        /// let go once written.
        var snapshots: [PoolSnapshot]?
        /// When `snapshots` were taken (the checkpoint's frames carry it).
        let takenAt: Int64
        let wake: @Sendable () -> Void
        /// The checkpoint's size, or why the job failed (its `path.new` then removed).
        var result: Result<Int, PoolStoreError>?
        /// `path.new`, open for reading and writing, positioned at its end: the journal the
        /// loop takes over (-1 until the checkpoint is written, and after a failure).
        var output: Int32 = -1
        /// Where the copy of the journal into `output` has got to: `bytes`, plus the frames the
        /// loop appended after them that the threads copied.
        var copiedTo: Int
        /// Catch-up rounds the loop asked for so far.
        var catchUps = 0
        /// What the loop asks the thread once it is done.
        enum Command {
            /// Copy what the loop appended since, then be done again.
            case catchUp
            /// Close this descriptor (the replaced journal; -1: none) and end.
            case close(Int32)
        }
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let commanded = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var finished = false
        private var command: Command?

        init(
            path: String, bytes: Int, snapshots: [PoolSnapshot]?, takenAt: Int64, wake: @escaping @Sendable () -> Void
        ) {
            self.path = path
            self.bytes = bytes
            self.snapshots = snapshots
            self.takenAt = takenAt
            self.copiedTo = bytes
            self.wake = wake
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            commanded.initialize(to: pthread_cond_t())
            pthread_cond_init(commanded, nil)
        }

        deinit {
            pthread_cond_destroy(commanded)
            commanded.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Whether the job's thread is done (its result set).
        var isDone: Bool {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return finished
        }

        /// On the loop: what the thread does next (once done with what it does now).
        func send(_ next: Command) {
            pthread_mutex_lock(mutex)
            if case .catchUp = next { finished = false }
            command = next
            pthread_cond_signal(commanded)
            pthread_mutex_unlock(mutex)
        }

        /// The thread's body: the compaction, then the loop's commands until it says close.
        func main() {
            // Background work at the lowest priority (nice 19, this thread only: Linux keeps
            // the nice value per thread): woken by the loop's command, or by its own end of a
            // system call, it never preempts the loop on the CPU they share (measured: a
            // normal-priority thread woken to close the replaced journal held the loop 2-7 ms).
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            run()
            while true {
                pthread_mutex_lock(mutex)
                while command == nil { pthread_cond_wait(commanded, mutex) }
                let next = command!
                command = nil
                pthread_mutex_unlock(mutex)
                switch next {
                case .catchUp: catchUp()
                case .close(let fd):
                    // The last close of the replaced file frees its blocks: ~10 ms for 70 MB.
                    if fd >= 0 { _ = Glibc.close(fd) }
                    return
                }
            }
        }

        private func done(_ outcome: Result<Int, PoolStoreError>) {
            if case .failure = outcome {
                if output >= 0 { _ = Glibc.close(output) }
                output = -1
                unlink(path + ".new")
            }
            result = outcome
            pthread_mutex_lock(mutex)
            finished = true
            pthread_mutex_unlock(mutex)
            wake()
        }

        /// Writes the pools as a checkpoint to `path.new` (the snapshots handed over, or the
        /// state the journal's first `bytes` bytes describe, replayed), then catches up with
        /// what the loop appended meanwhile.
        func run() {
            done(
                Result { () throws(PoolStoreError) -> Int in
                    let fd = try openJournal()
                    defer { _ = Glibc.close(fd) }
                    let checkpoint: [UInt8]
                    if let snapshots {
                        checkpoint = PoolJournal.checkpointFile(snapshots, time: takenAt)
                        self.snapshots = nil
                    } else {
                        let replayed = try replayJournal(fd)
                        checkpoint = PoolJournal.checkpointFile(
                            replayed.snapshots(), time: replayed.lastWrittenAt?.unixMilliseconds ?? 0)
                    }
                    let temporary = path + ".new"
                    output = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                    guard output >= 0 else {
                        throw PoolStoreError(.io, "pool journal \(temporary): \(String(cString: strerror(errno)))")
                    }
                    if let error = PoolJournal.writeAll(output, checkpoint) {
                        throw PoolStoreError(.io, "pool journal \(temporary): write: \(error)")
                    }
                    try catchUp(from: fd)
                    return checkpoint.count
                })
        }

        /// The journal's first `bytes` bytes (whole frames) replayed, read a chunk at a time:
        /// the compaction's memory is the pools' state, not the journal's size (a 64 MiB
        /// journal read whole showed as 64 MiB more RSS).
        private func replayJournal(_ fd: Int32) throws(PoolStoreError) -> PoolJournalReplay {
            var replay = PoolJournalReplay()
            var chunk = [UInt8](repeating: 0, count: Compaction.chunkBytes)
            var offset = 0
            while offset < bytes {
                let count = chunk.withUnsafeMutableBytes {
                    pread(fd, $0.baseAddress!, min($0.count, bytes - offset), off_t(offset))
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    let message = count == 0 ? "file shorter than written" : String(cString: strerror(errno))
                    throw PoolStoreError(.io, "pool journal \(path): compaction: read: \(message)")
                }
                offset += count
                let refused = chunk.withUnsafeBytes { piece -> StoreRecordError? in
                    do throws(StoreRecordError) {
                        try replay.feed(UnsafeRawBufferPointer(rebasing: piece[0..<count]))
                        return nil
                    } catch {
                        return error
                    }
                }
                if let refused {
                    throw PoolStoreError(.unreadable, "pool journal \(path): compaction: \(refused.message)")
                }
            }
            do throws(StoreRecordError) {
                try replay.finishFeeding()
            } catch {
                throw PoolStoreError(.unreadable, "pool journal \(path): compaction: \(error.message)")
            }
            return replay
        }

        /// The journal, open for reading (the thread's own descriptor, closed by the caller).
        private func openJournal() throws(PoolStoreError) -> Int32 {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw PoolStoreError(.io, "pool journal \(path): \(String(cString: strerror(errno)))")
            }
            return fd
        }

        /// Copies to `output` what the loop appended to the journal since the last copy.
        func catchUp() {
            let checkpointBytes = (try? result?.get()) ?? 0
            done(
                Result { () throws(PoolStoreError) -> Int in
                    let fd = try openJournal()
                    defer { _ = Glibc.close(fd) }
                    try catchUp(from: fd)
                    return checkpointBytes
                })
        }

        /// Copies what the journal (`input`) holds past `copiedTo` to `output`, round after round
        /// while the loop appends, then writes `output`'s blocks to the disk (`fdatasync`) and
        /// copies what came meanwhile: on ext4, a file renamed over another is written out before
        /// the rename returns (`auto_da_alloc`), so the rename, on the loop, would otherwise wait
        /// for the whole checkpoint to be allocated and written (measured: 19 ms for 68 MB).
        private func catchUp(from input: Int32) throws(PoolStoreError) {
            let temporary = path + ".new"
            var chunk = [UInt8](repeating: 0, count: Compaction.chunkBytes)
            func copy() throws(PoolStoreError) {
                for _ in 0..<64 {
                    let end = Int(lseek(input, 0, SEEK_END))
                    if end - copiedTo < 64 << 10 { return }
                    while copiedTo < end {
                        let count = chunk.withUnsafeMutableBytes {
                            pread(input, $0.baseAddress, min($0.count, end - copiedTo), off_t(copiedTo))
                        }
                        if count < 0 && errno == EINTR { continue }
                        guard count > 0 else { break }
                        if let error = chunk.withUnsafeBytes({
                            PoolJournal.writeAll(output, UnsafeRawBufferPointer(rebasing: $0[0..<count]))
                        }) {
                            throw PoolStoreError(.io, "pool journal \(temporary): write: \(error)")
                        }
                        copiedTo += count
                    }
                }
            }
            // Twice: what came during the first fdatasync (a few hundred KB) would otherwise
            // be written out by the rename (measured: 1.2 ms of the loop's CPU once in six).
            for _ in 0..<2 {
                try copy()
                if fdatasync(output) != 0 {
                    throw PoolStoreError(
                        .io, "pool journal \(temporary): fdatasync: \(String(cString: strerror(errno)))")
                }
            }
            try copy()
        }
    }

    /// Whether a compaction is under way.
    public var isCompacting: Bool { compaction != nil }

    /// Starts compacting the journal on a thread of its own (see the type's documentation).
    /// - Returns: false when one is already under way, the journal is not open, or the thread
    ///   cannot start (nothing changes then).
    ///
    /// - Parameter snapshots: the pools as they are now, when the caller has them cheaply (the
    ///   loader's ``NativeAdvertisementLoader/snapshot()``: every change noted so far is in
    ///   them): the thread writes them as the checkpoint and replays nothing. Nil: the thread
    ///   rebuilds the pools by replaying the journal (a pool too big to copy on the loop).
    @discardableResult
    public func startCompaction(from snapshots: [PoolSnapshot]? = nil) -> Bool {
        guard compaction == nil, descriptor >= 0 else { return false }
        commit()
        let job = Compaction(
            path: path, bytes: fileBytes, snapshots: snapshots, takenAt: now().unixMilliseconds, wake: wake)
        let context = Unmanaged.passRetained(job).toOpaque()
        let started = pthread_create(
            &compactionThread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Compaction>.fromOpaque(raw).takeRetainedValue().main()
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<Compaction>.fromOpaque(context).release()
            failed(PoolStoreError(.io, "pool journal \(path): cannot start the compaction's thread (error \(started))"))
            return false
        }
        compaction = job
        return true
    }

    /// What ``finishCompaction()`` did.
    public enum CompactionOutcome: Equatable, Sendable {
        /// No compaction is under way, or its thread is not done yet (or was handed more to
        /// copy: it calls `wake` again).
        case notDone
        /// The journal was replaced: its checkpoint's bytes, the frames appended after it, and
        /// how many of those the loop copied (the threads copied the rest).
        case replaced(checkpointBytes: Int, tailBytes: Int, loopTailBytes: Int)
        /// The compaction failed; the journal stays as it was.
        case failed(PoolStoreError)
    }

    /// On the loop, after `wake`: copies the frames appended since the thread's last copy to its
    /// `path.new` (read back from the journal's own file: the loop keeps no copy) and renames
    /// that over the journal. When more than ``loopTailLimit`` bytes are left to copy, a thread
    /// copies them first (`.notDone`: it calls `wake` again), so the loop's part stays small
    /// whatever the loop wrote meanwhile.
    @discardableResult
    public func finishCompaction() -> CompactionOutcome {
        guard let job = compaction, job.isDone else { return .notDone }
        let temporary = path + ".new"
        /// The thread closes `fd` and ends by itself, unjoined: its end frees its memory (the
        /// replay's arena: ~12 ms at 100k ads, measured), not waited for here.
        func release(closing fd: Int32) {
            compaction = nil
            job.send(.close(fd))
            pthread_detach(compactionThread)
        }
        let written: Int
        switch job.result {
        case .success(let bytes): written = bytes
        case .failure(let error):
            release(closing: -1)
            failed(error)
            return .failed(error)
        case nil:
            release(closing: -1)
            return .notDone
        }
        func fail(_ message: String) -> CompactionOutcome {
            if job.output >= 0 { _ = Glibc.close(job.output) }
            release(closing: -1)
            unlink(temporary)
            let error = PoolStoreError(.io, "pool journal \(temporary): \(message)")
            failed(error)
            return .failed(error)
        }
        // A write failed meanwhile (cut off the journal): what the thread copied may hold it.
        guard tailComplete else {
            tailComplete = true
            return fail("a journal write failed during the compaction")
        }
        guard job.copiedTo <= fileBytes else { return fail("the thread copied more than the journal holds") }
        let left = fileBytes - job.copiedTo
        if left > loopTailLimit && job.catchUps < 8 {
            job.catchUps += 1
            job.send(.catchUp)
            return .notDone
        }
        if let error = Self.copy(from: descriptor, at: job.copiedTo, count: left, to: job.output) {
            return fail("write: \(error)")
        }
        guard rename(temporary, path) == 0 else { return fail("rename: \(String(cString: strerror(errno)))") }
        // The replaced journal is closed by the thread: its last close frees its blocks.
        release(closing: descriptor)
        descriptor = job.output
        let tail = fileBytes - job.bytes
        fileBytes = written + tail
        checkpointBytes = written
        checkpoints += 1
        return .replaced(checkpointBytes: written, tailBytes: tail, loopTailBytes: left)
    }

    /// Appends `count` bytes of `input` from `offset` to `output`; the error text, or nil.
    private static func copy(from input: Int32, at offset: Int, count: Int, to output: Int32) -> String? {
        guard count > 0 else { return nil }
        // 64 KiB: from the heap, below malloc's threshold for a mapping of its own (no mapping
        // change on the loop, which would wait for the compaction thread's).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, 64 << 10), alignment: 16)
        defer { buffer.deallocate() }
        var position = offset
        while position < offset + count {
            let read = pread(input, buffer.baseAddress, min(buffer.count, offset + count - position), off_t(position))
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                return read == 0 ? "the journal is shorter than written" : String(cString: strerror(errno))
            }
            if let error = writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[0..<read])) { return error }
            position += read
        }
        return nil
    }

    /// Waits for a compaction under way (its thread ends after what it does now; only
    /// ``finishCompaction()`` detaches it) and drops its result.
    private func abandonCompaction() {
        guard let job = compaction else { return }
        job.send(.close(-1))
        pthread_join(compactionThread, nil)
        compaction = nil
        if job.output >= 0 { _ = Glibc.close(job.output) }
        tailComplete = true
        unlink(path + ".new")
    }

    private func failed(_ error: PoolStoreError) {
        writeFailures += 1
        lastError = error
        onWriteFailure?(error)
    }

    /// Writes all of `bytes` (retrying short writes and EINTR); the error text, or nil.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> String? {
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
