/// A ``CapStore`` in memory: answers at once; counts are lost when the process ends.
///
/// For unit tests and a single process that may forget its counts. Memory stays bounded by
/// activity: expired sessions and past days are dropped as the store grows.
///
/// - Important: loop-confined.
public final class InMemoryCapStore: CapStore {
    private struct Session {
        var count: Int
        var lastActive: AdInstant
    }

    private struct DayKey: Hashable {
        var loader: String
        var deviceID: String
        var day: LocalDay
    }

    private struct SessionKey: Hashable {
        var loader: String
        var deviceID: String
        var sessionID: String
    }

    private var sessions: [SessionKey: Session] = [:]
    private var days: [DayKey: Int] = [:]
    private var pruneAt = 1_024
    private var isClosed = false
    /// When set, every call fails with it (tests of an outage).
    public var failure: CapStoreError?
    /// When true, completions wait for ``completeDeferred()`` instead of running before the
    /// call returns (tests of a store that answers later, like a worker thread's).
    public var defersCompletions = false
    private var deferred: [() -> Void] = []

    public init() {}

    public func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        finish(update(key, now: now, sessionTimeout: sessionTimeout, increment: false), completion)
    }

    public func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        finish(update(key, now: now, sessionTimeout: sessionTimeout, increment: true), completion)
    }

    /// Runs the completions held back by ``defersCompletions``, oldest first.
    public func completeDeferred() {
        let waiting = deferred
        deferred = []
        for completion in waiting { completion() }
    }

    /// Completions held back by ``defersCompletions``.
    public var deferredCount: Int { deferred.count }

    private func finish(
        _ result: Result<AppOpenCounts, CapStoreError>,
        _ completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        if defersCompletions {
            deferred.append { completion(result) }
        } else {
            completion(result)
        }
    }

    public func close() {
        isClosed = true
        sessions = [:]
        days = [:]
    }

    private func update(
        _ key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool
    ) -> Result<AppOpenCounts, CapStoreError> {
        if isClosed { return .failure(CapStoreError("store closed")) }
        if let failure { return .failure(failure) }
        let sessionKey = SessionKey(loader: key.loader, deviceID: key.deviceID, sessionID: key.sessionID)
        let dayKey = DayKey(loader: key.loader, deviceID: key.deviceID, day: key.day)
        var session = sessions[sessionKey] ?? Session(count: 0, lastActive: now)
        if now - session.lastActive >= sessionTimeout { session.count = 0 }
        session.lastActive = now
        var day = days[dayKey] ?? 0
        if increment {
            session.count += 1
            day += 1
            days[dayKey] = day
        }
        sessions[sessionKey] = session
        if sessions.count + days.count >= pruneAt { prune(now: now, sessionTimeout: sessionTimeout, today: key.day) }
        return .success(AppOpenCounts(session: session.count, day: day))
    }

    /// Drops sessions past their timeout and days more than two days before `today` (no UTC
    /// offset is that far from another).
    private func prune(now: AdInstant, sessionTimeout: Duration, today: LocalDay) {
        sessions = sessions.filter { now - $0.value.lastActive < sessionTimeout }
        days = days.filter { $0.key.day.daysSinceEpoch >= today.daysSinceEpoch - 2 }
        pruneAt = max(1_024, 2 * (sessions.count + days.count))
    }
}
