#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because on Linux `Mutex` locks with raw futex
/// calls that ThreadSanitizer does not see, so `swift test --sanitize=thread` reports every
/// access under it as a race (checked with a 4-thread counter: correct total, false
/// reports). pthread mutexes are intercepted by TSan, so real races stay visible.
///
/// `@unchecked Sendable`: `value` is only read or written between `pthread_mutex_lock` and
/// `pthread_mutex_unlock` of `mutex`, which this class owns for its whole life.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
