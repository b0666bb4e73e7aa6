/// Where app-open counts live: confirmed shows per device session and per device day.
///
/// Implementations: ``InMemoryCapStore`` (tests, one process, lost on restart), and the
/// SQLite (durable, embedded; on the loop, or on a worker thread with group commit) and Redis
/// (shared by a fleet) stores of `AdStores`.
///
/// Calls answer through a completion, so that a store may answer at once (in-memory, SQLite
/// on the loop, Redis) or later (SQLite on its worker thread); either way the completion runs
/// on the loop thread that made the call, exactly once. The service keeps a call whose store
/// answers later open (it counts toward the connection's calls in flight, has its deadline,
/// can be cancelled and ends with the drain) and answers it from the completion.
///
/// Sessions: a session's count ends when the session was inactive (no ``counts(for:at:sessionTimeout:completion:)``
/// and no ``confirmShow(for:at:sessionTimeout:completion:)``) for `sessionTimeout`; both calls
/// mark it active at `now`. Days: a day's count is that of ``CapKey/day``; stores may forget
/// it once the day is over everywhere.
///
/// - Important: loop-confined: call it on one thread, the loader's.
public protocol CapStore: AnyObject {
    /// The counts of `key`'s session and day; marks the session active at `now`.
    func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void)

    /// Adds one confirmed show to `key`'s session and day, atomically, and answers with the
    /// counts after it. The completion runs once the show is durable (what durable means is
    /// the store's: committed to the file, or acknowledged by Redis).
    func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void)

    /// Releases the store's resources; later calls fail with ``CapStoreError``.
    func close()
}
