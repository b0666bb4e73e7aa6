import AdLoaderCore
import AdLoaderLogging
import AdLoaderService
import AdLoaderUV
import AdStores

/// The pool store's write-through half: the loader's events go into the ``PoolJournal``,
/// which is committed before any answer leaves (the server's write barrier), before any
/// notice is stored, and at the end of every loop pass; a journal past its size is compacted
/// on the journal's own thread (``PoolJournal/startCompaction()``), the loop only handing over
/// the frames written meanwhile when it is done (``compactionFinished()``).
///
/// What this buys (RELIABILITY.md, "Crash"): after `kill -9` the next start rebuilds every
/// pool as it was after the last answer that left, so an ad a client holds is restored under
/// its lease (never lent to another cell) and an ad that came back is lendable again.
///
/// - Important: loop-confined.
final class PoolJournaling {
    let journal: PoolJournal
    private let loader: NativeAdvertisementLoader
    private let server: ServerContext
    private let store: SQLitePoolStore
    private let deferred: any DeferredWork
    private let logger: Logger
    private var token: ObserverToken?
    private var compactionDue = false
    /// Whether the compaction under way writes the loader's snapshots (else a replay).
    private var compactionFromSnapshot = false
    /// The loop's time to take those snapshots, in µs (part of the compaction's first part).
    private var compactionSnapshotMicroseconds: Int64 = 0
    /// The most ads (``NativeAdvertisementLoader/adsHeld``) a compaction copies on the loop
    /// (``NativeAdvertisementLoader/snapshot(ordered:)``) rather than have its thread replay
    /// the journal. Measured (BENCHMARKS.md 9.5, release): the copy of 4,096 ads took the loop
    /// 0.44-0.80 ms (100-200 ns an ad, a cache miss each), within the 1 ms a loop pass may
    /// take; the replay costs no loop time but ~100 ns per journal record on the other core,
    /// two records per Borrow and Return: a sixth of the call's own CPU.
    static let snapshotCompactionLimit = 4096
    private var compactionStarted: Int64 = 0
    /// The loop's own share of the compaction under way (starting it, handing a catch-up to a
    /// thread, finishing it), in µs: in all, and its longest single part (one loop pause).
    private var compactionLoopMicroseconds: Int64 = 0
    private var compactionLoopLongest: Int64 = 0
    /// The loop thread's CPU time in those parts, in µs (apart from waits and preemption), and
    /// its context switches in them: blocked in the kernel, preempted.
    private var compactionLoopCPU: Int64 = 0
    private var compactionLoopSwitches: (voluntary: Int64, involuntary: Int64) = (0, 0)

    init(
        journal: PoolJournal, loader: NativeAdvertisementLoader, server: ServerContext, store: SQLitePoolStore,
        deferred: any DeferredWork, logger: Logger
    ) {
        self.journal = journal
        self.loader = loader
        self.server = server
        self.store = store
        self.deferred = deferred
        self.logger = logger
    }

    /// Starts writing through: every change from now on is journaled.
    func attach() {
        let journal = self.journal
        let deferred = self.deferred
        // Built once: the per-pass request allocates nothing.
        let endOfPass: () -> Bool = { [unowned self] in self.endOfPass() }
        token = loader.addObserver { event in
            // Changes no answer carries (ads arriving, a sweep) are written at the end of the pass.
            if journal.record(event) { deferred.request(endOfPass) }
        }
        server.beforeAnswersLeave = { journal.commit() }
        server.answersLeaveAtTheEndOfThePass = true
        store.beforeNoticeWrite = { journal.commit() }
        journal.onCompactionDue = { [unowned self] in
            // Not inside the commit that noticed it: at the end of the pass.
            self.compactionDue = true
            self.deferred.request { [unowned self] in self.endOfPass() }
        }
    }

    /// Stops writing through (before a clean stop suspends the pools into SQLite), committing
    /// what is noted.
    func detach() {
        journal.commit()
        if let token { loader.removeObserver(token) }
        token = nil
        server.beforeAnswersLeave = nil
        server.answersLeaveAtTheEndOfThePass = false
        store.beforeNoticeWrite = nil
        journal.onCompactionDue = nil
    }

    private func endOfPass() -> Bool {
        journal.commit()
        if compactionDue {
            compactionDue = false
            compact()
        }
        return false
    }

    /// Starts replacing the journal with a checkpoint of what it describes, off the loop.
    func compact() {
        guard token != nil else { return }
        compactionStarted = Daemon.monotonicMilliseconds()
        let started = Daemon.monotonicMicroseconds()
        let cpu = Daemon.threadCPUMicroseconds()
        let switches = Daemon.threadContextSwitches()
        // Small pools are copied here and written as they are; big ones are rebuilt by the
        // thread from the journal, which costs the loop nothing but replays the whole history.
        compactionFromSnapshot = loader.adsHeld <= Self.snapshotCompactionLimit
        let snapshots = compactionFromSnapshot ? loader.snapshot(ordered: false) : nil
        compactionSnapshotMicroseconds = Daemon.monotonicMicroseconds() - started
        if !journal.startCompaction(from: snapshots) && !journal.isCompacting, let error = journal.lastError {
            logger.error("pool journal compaction failed", ["error": .string(error.message)])
        }
        compactionLoopMicroseconds = Daemon.monotonicMicroseconds() - started
        compactionLoopLongest = compactionLoopMicroseconds
        compactionLoopCPU = Daemon.threadCPUMicroseconds() - cpu
        let after = Daemon.threadContextSwitches()
        compactionLoopSwitches = (after.voluntary - switches.voluntary, after.involuntary - switches.involuntary)
    }

    /// On the loop, when the compaction's thread woke it: the journal is replaced.
    func compactionFinished() {
        let started = Daemon.monotonicMicroseconds()
        let cpu = Daemon.threadCPUMicroseconds()
        let switches = Daemon.threadContextSwitches()
        let outcome = journal.finishCompaction()
        compactionLoopCPU += Daemon.threadCPUMicroseconds() - cpu
        let after = Daemon.threadContextSwitches()
        compactionLoopSwitches.voluntary += after.voluntary - switches.voluntary
        compactionLoopSwitches.involuntary += after.involuntary - switches.involuntary
        let part = Daemon.monotonicMicroseconds() - started
        compactionLoopMicroseconds += part
        compactionLoopLongest = max(compactionLoopLongest, part)
        switch outcome {
        case .notDone: return
        case .replaced(let checkpointBytes, let tailBytes, let loopTailBytes):
            // `ms`: the whole compaction, on its threads; `loopUs`: what of it ran on the loop
            // (`loopMaxUs`: its longest part, one loop pause; `loopCpuUs`: the loop thread's CPU
            // time in them; `loopBlocked`, `loopPreempted`: its context switches in them), which
            // copied `loopTailBytes` of the frames written meanwhile (the
            // thread the rest).
            logger.info(
                "pool journal compacted",
                [
                    "from": .string(compactionFromSnapshot ? "snapshot" : "replay"),
                    "snapshotUs": .int(compactionSnapshotMicroseconds),
                    "bytes": .int(Int64(checkpointBytes)), "tailBytes": .int(Int64(tailBytes)),
                    "loopTailBytes": .int(Int64(loopTailBytes)),
                    "ms": .int(Daemon.monotonicMilliseconds() - compactionStarted),
                    "loopUs": .int(compactionLoopMicroseconds), "loopMaxUs": .int(compactionLoopLongest),
                    "loopCpuUs": .int(compactionLoopCPU),
                    "loopBlocked": .int(compactionLoopSwitches.voluntary),
                    "loopPreempted": .int(compactionLoopSwitches.involuntary),
                ])
        case .failed(let error):
            logger.error("pool journal compaction failed, the journal stays", ["error": .string(error.message)])
        }
    }
}
