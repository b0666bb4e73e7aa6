public import AdLoaderCore

#if canImport(Glibc)
    import Glibc
#endif

/// A ``CapStore`` that runs a ``SQLiteCapStore`` on a thread of its own, so that commits with
/// an fsync (`synchronous=FULL`: 1–4 ms each here) never stall the event loop, and commits
/// them in groups: every call that arrives while a commit runs goes into the next one
/// transaction, one fsync for all of them.
///
/// Durability is unchanged: a completion runs only after the transaction holding its call is
/// committed, and the service answers a shown Return from that completion.
///
/// Completions run on the loop: the worker calls `wake` (a `uv_async_send`) after each
/// commit, and the loop's handler calls ``drainCompletions()``.
///
/// - Important: loop-confined, except the worker thread it owns. ``close()`` joins the worker
///   (finishing the calls it was given) before it returns; call it before closing the handle
///   behind `wake`.
public final class BackgroundCapStore: CapStore {
    /// What the loop and the worker share.
    ///
    /// `@unchecked Sendable`: `pending`, `finished` and `stopping` are read and written only
    /// with `mutex` held; `store` is used only by the worker thread once it started (the loop
    /// never touches it after handing it over); `wake` is itself `Sendable`.
    private final class Shared: @unchecked Sendable {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        var pending: [(id: UInt64, job: CapStoreJob)] = []
        var finished: [(id: UInt64, result: Result<AppOpenCounts, CapStoreError>)] = []
        var stopping = false
        /// Transactions committed (a test reads it to see calls grouped).
        var batches = 0
        let store: SQLiteCapStore
        let wake: @Sendable () -> Void

        init(store: SQLiteCapStore, wake: @escaping @Sendable () -> Void) {
            self.store = store
            self.wake = wake
            mutex.initialize(to: pthread_mutex_t())
            condition.initialize(to: pthread_cond_t())
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(condition, nil)
        }

        deinit {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
        }

        func locked<R>(_ body: () -> R) -> R {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body()
        }

        /// The worker: waits for calls, runs all that are waiting in one transaction, hands
        /// the results back and wakes the loop; after `stopping`, finishes what is left.
        func run() {
            while true {
                pthread_mutex_lock(mutex)
                while pending.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
                let batch = pending
                pending = []
                let stop = stopping
                pthread_mutex_unlock(mutex)
                if !batch.isEmpty {
                    let results = store.apply(batch.map(\.job))
                    locked {
                        batches += 1
                        for (call, result) in zip(batch, results) { finished.append((call.id, result)) }
                    }
                    wake()
                }
                if stop && batch.isEmpty { break }
            }
            store.close()
        }
    }

    /// The SQLite file.
    public let path: String
    private let shared: Shared
    private var thread = pthread_t()
    private var completions: [UInt64: (Result<AppOpenCounts, CapStoreError>) -> Void] = [:]
    private var nextID: UInt64 = 1
    private var isClosed = false

    /// Starts the worker thread, which owns `store` from now on.
    /// - Parameters:
    ///   - store: an open store, not to be used by the caller any more.
    ///   - wake: called on the worker thread after each commit; it must make the loop call
    ///     ``drainCompletions()`` (a `UVAsync.Sender.send`).
    public init(store: SQLiteCapStore, wake: @escaping @Sendable () -> Void) throws(CapStoreError) {
        path = store.path
        shared = Shared(store: store, wake: wake)
        let context = Unmanaged.passRetained(shared).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Shared>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, context)
        if started != 0 {
            Unmanaged<Shared>.fromOpaque(context).release()
            store.close()
            throw CapStoreError("sqlite \(store.path): cannot start the store's thread (error \(started))")
        }
    }

    deinit { close() }

    public func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        submit(CapStoreJob(key: key, now: now, sessionTimeout: sessionTimeout, increment: false), completion)
    }

    public func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        submit(CapStoreJob(key: key, now: now, sessionTimeout: sessionTimeout, increment: true), completion)
    }

    /// Runs the completions of every call committed so far. Call it on the loop when woken.
    public func drainCompletions() {
        let done = shared.locked {
            let done = shared.finished
            shared.finished = []
            return done
        }
        for (id, result) in done { completions.removeValue(forKey: id)?(result) }
    }

    /// Calls submitted and not yet completed.
    public var pendingCount: Int { completions.count }

    /// Transactions the worker committed (each holds every call waiting when it began).
    public var batchCount: Int { shared.locked { shared.batches } }

    /// Finishes the calls already submitted (their completions run before this returns),
    /// stops and joins the worker, and closes the SQLite file. Later calls fail at once.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        shared.locked {
            shared.stopping = true
            pthread_cond_signal(shared.condition)
        }
        pthread_join(thread, nil)
        drainCompletions()
        let left = completions
        completions = [:]
        for (_, completion) in left { completion(.failure(CapStoreError("sqlite \(path): store closed"))) }
    }

    private func submit(_ job: CapStoreJob, _ completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void) {
        if isClosed {
            completion(.failure(CapStoreError("sqlite \(path): store closed")))
            return
        }
        let id = nextID
        nextID += 1
        completions[id] = completion
        shared.locked {
            shared.pending.append((id, job))
            pthread_cond_signal(shared.condition)
        }
    }
}
