public import AdLoaderCore
internal import CSQLite

/// A ``CapStore`` in a SQLite file: the embedded default. Counts survive restarts and
/// `kill -9`: a confirmed show is committed before its completion runs.
///
/// The file is in WAL mode with `synchronous=FULL` by default (every commit is fsynced:
/// durable across power loss too); ``Synchronous/normal`` commits to the WAL without an
/// fsync (durable across a process kill, not a power loss). Several processes may share one
/// file on one machine: writes take the write lock (`BEGIN IMMEDIATE`) and wait up to
/// `busyTimeout` for it.
///
/// Calls run on the caller's thread and answer before returning: ~20 us per commit with
/// `normal`, acceptable on the loop; with `full` the daemon wraps the store in a
/// ``BackgroundCapStore`` (a worker thread, group commit), see BENCHMARKS.md section 4.
///
/// - Important: loop-confined: one thread uses one store.
public final class SQLiteCapStore: CapStore {
    /// How a commit reaches the disk (SQLite's `PRAGMA synchronous`).
    public enum Synchronous: String, Hashable, Sendable, CaseIterable {
        /// fsync on every commit: durable across a crash of the machine.
        case full
        /// no fsync in WAL mode: durable across a crash of the process only.
        case normal
    }

    public let path: String
    private var db: OpaquePointer?
    private var selectSession: OpaquePointer?
    private var upsertSession: OpaquePointer?
    private var selectDay: OpaquePointer?
    private var incrementDay: OpaquePointer?
    private var begin: OpaquePointer?
    private var commit: OpaquePointer?
    private var rollback: OpaquePointer?
    private var prune: OpaquePointer?
    private var writesSincePrune = 0

    /// Opens (creating when missing) the file at `path` and its tables.
    /// - Throws: ``CapStoreError`` naming the path and SQLite's message.
    public init(path: String, synchronous: Synchronous = .full, busyTimeout: Duration = .seconds(5))
        throws(CapStoreError)
    {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &handle, flags, nil)
        db = handle
        guard opened == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            close()
            throw CapStoreError("sqlite \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, Int32(clamping: busyTimeout.milliseconds))
        do throws(CapStoreError) {
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=\(synchronous.rawValue.uppercased())")
            try execute(
                """
                CREATE TABLE IF NOT EXISTS app_open_sessions (
                  loader TEXT NOT NULL, device TEXT NOT NULL, session TEXT NOT NULL,
                  count INTEGER NOT NULL, last_active_ms INTEGER NOT NULL,
                  PRIMARY KEY (loader, device, session)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS app_open_days (
                  loader TEXT NOT NULL, device TEXT NOT NULL, day INTEGER NOT NULL, count INTEGER NOT NULL,
                  PRIMARY KEY (loader, device, day)) WITHOUT ROWID;
                """)
            selectSession = try prepare(
                "SELECT count, last_active_ms FROM app_open_sessions WHERE loader = ?1 AND device = ?2 AND session = ?3"
            )
            upsertSession = try prepare(
                """
                INSERT INTO app_open_sessions (loader, device, session, count, last_active_ms) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (loader, device, session) DO UPDATE SET count = excluded.count, last_active_ms = excluded.last_active_ms
                """)
            selectDay = try prepare("SELECT count FROM app_open_days WHERE loader = ?1 AND device = ?2 AND day = ?3")
            incrementDay = try prepare(
                """
                INSERT INTO app_open_days (loader, device, day, count) VALUES (?1, ?2, ?3, 1)
                ON CONFLICT (loader, device, day) DO UPDATE SET count = count + 1
                """)
            begin = try prepare("BEGIN IMMEDIATE")
            commit = try prepare("COMMIT")
            rollback = try prepare("ROLLBACK")
            prune = try prepare("DELETE FROM app_open_days WHERE day < ?1")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    public func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        completion(update(key, now: now, sessionTimeout: sessionTimeout, increment: false))
    }

    public func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        completion(update(key, now: now, sessionTimeout: sessionTimeout, increment: true))
    }

    /// Runs `jobs` in one transaction (one commit, one fsync under `full`): what
    /// ``BackgroundCapStore`` does with every call that arrived during the previous commit.
    /// - Returns: one result per job, in order; all failures when the transaction fails.
    public func apply(_ jobs: [CapStoreJob]) -> [Result<AppOpenCounts, CapStoreError>] {
        guard db != nil else { return jobs.map { _ in .failure(CapStoreError("sqlite \(path): store closed")) } }
        do throws(CapStoreError) {
            try step(begin)
            var counts: [AppOpenCounts] = []
            do throws(CapStoreError) {
                for job in jobs {
                    counts.append(
                        try updateInTransaction(
                            job.key, now: job.now, sessionTimeout: job.sessionTimeout, increment: job.increment))
                }
                try step(commit)
            } catch {
                try? step(rollback)
                throw error
            }
            return counts.map { .success($0) }
        } catch {
            return jobs.map { _ in .failure(error) }
        }
    }

    public func close() {
        for statement in [selectSession, upsertSession, selectDay, incrementDay, begin, commit, rollback, prune] {
            sqlite3_finalize(statement)
        }
        selectSession = nil
        upsertSession = nil
        selectDay = nil
        incrementDay = nil
        begin = nil
        commit = nil
        rollback = nil
        prune = nil
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    // MARK: One transaction per call

    private func update(
        _ key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool
    ) -> Result<AppOpenCounts, CapStoreError> {
        guard db != nil else { return .failure(CapStoreError("sqlite \(path): store closed")) }
        do throws(CapStoreError) {
            try step(begin)
            do throws(CapStoreError) {
                let counts = try updateInTransaction(
                    key, now: now, sessionTimeout: sessionTimeout, increment: increment)
                try step(commit)
                return .success(counts)
            } catch {
                try? step(rollback)
                throw error
            }
        } catch {
            return .failure(error)
        }
    }

    private func updateInTransaction(
        _ key: CapKey, now: AdInstant, sessionTimeout: Duration, increment: Bool
    ) throws(CapStoreError) -> AppOpenCounts {
        var session = 0
        try bindKey(selectSession, key, session: true)
        defer { sqlite3_reset(selectSession) }
        let found = try stepRow(selectSession)
        if found {
            let lastActive = AdInstant(unixMilliseconds: sqlite3_column_int64(selectSession, 1))
            if now - lastActive < sessionTimeout { session = Int(sqlite3_column_int64(selectSession, 0)) }
        }
        sqlite3_reset(selectSession)
        if increment {
            session += 1
            try bindKey(incrementDay, key, session: false)
            try step(incrementDay)
            writesSincePrune += 1
            if writesSincePrune >= 1_000 {
                // Days at least two days older than this one are over at every UTC offset.
                writesSincePrune = 0
                sqlite3_bind_int64(prune, 1, key.day.daysSinceEpoch - 2)
                try step(prune)
            }
        }
        try bindKey(upsertSession, key, session: true)
        sqlite3_bind_int64(upsertSession, 4, Int64(session))
        sqlite3_bind_int64(upsertSession, 5, now.unixMilliseconds)
        try step(upsertSession)
        try bindKey(selectDay, key, session: false)
        defer { sqlite3_reset(selectDay) }
        let day = try stepRow(selectDay) ? Int(sqlite3_column_int64(selectDay, 0)) : 0
        return AppOpenCounts(session: session, day: day)
    }

    // MARK: SQLite helpers

    /// Binds loader, device, and session or day as parameters 1...3.
    private func bindKey(_ statement: OpaquePointer?, _ key: CapKey, session: Bool) throws(CapStoreError) {
        sqlite3_reset(statement)
        try bind(statement, 1, key.loader)
        try bind(statement, 2, key.deviceID)
        if session {
            try bind(statement, 3, key.sessionID)
        } else {
            sqlite3_bind_int64(statement, 3, key.day.daysSinceEpoch)
        }
    }

    private func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String) throws(CapStoreError) {
        var text = text
        let result = text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) {
                CSQLite_bind_text(statement, index, $0.baseAddress, Int32(utf8.count))
            }
        }
        if result != SQLITE_OK { throw failure("bind") }
    }

    /// Runs a statement that returns no rows, and resets it.
    private func step(_ statement: OpaquePointer?) throws(CapStoreError) {
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        if result != SQLITE_DONE && result != SQLITE_ROW { throw failure("step") }
    }

    /// Steps a query: true with a row to read, false when there is none.
    private func stepRow(_ statement: OpaquePointer?) throws(CapStoreError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure("query")
        }
    }

    private func execute(_ sql: String) throws(CapStoreError) {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw CapStoreError("sqlite \(path): \(message)")
        }
    }

    private func prepare(_ sql: String) throws(CapStoreError) -> OpaquePointer? {
        var statement: OpaquePointer?
        if sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) != SQLITE_OK {
            throw failure("prepare")
        }
        return statement
    }

    private func failure(_ operation: String) -> CapStoreError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return CapStoreError("sqlite \(path): \(operation): \(message)")
    }
}
