import AdLoaderCore
internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// The pool store in a SQLite file (`poolStore.sqlitePath`, next to the app-open store): what
/// a restart keeps. Today: the outbox of notices not yet delivered (``NoticeOutboxStore``).
///
/// The format is versioned (`PRAGMA application_id` names the file as ours, `PRAGMA
/// user_version` is ``formatVersion``): a file of another version, or one that is not a
/// SQLite database, is refused with ``PoolStoreError`` (``open(path:)`` moves it aside and
/// starts a new one, so the daemon starts empty, never half-restored).
///
/// WAL mode, `synchronous=NORMAL`: a write is in the WAL (the OS's page cache) when it returns,
/// so it survives `kill -9` (not a power loss).
///
/// - Important: loop-confined: one thread uses one store.
public final class SQLitePoolStore: NoticeOutboxStore {
    /// The format this build reads and writes; another one is refused.
    public static let formatVersion: Int64 = 1
    /// "ADLP" in `PRAGMA application_id`: the file is a pool store.
    static let applicationID: Int64 = 0x4144_4C50

    public let path: String
    private let database: SQLiteDatabase
    private let selectNotices: SQLiteDatabase.Statement
    private let upsertNotice: SQLiteDatabase.Statement
    private let deleteNotice: SQLiteDatabase.Statement
    /// Write failures so far (each also in ``lastError``); the daemon logs and counts them.
    public private(set) var writeFailures: UInt64 = 0
    public private(set) var lastError: PoolStoreError?
    /// Called with each write failure (the daemon logs it, rate-limited).
    public var onWriteFailure: ((PoolStoreError) -> Void)?

    /// Opens (creating when missing) the store at `path`.
    /// - Throws: ``PoolStoreError`` `.unreadable` (not a database, corrupt, cannot be opened)
    ///   or `.incompatible` (another format version, or another application's file).
    public init(path: String) throws(PoolStoreError) {
        self.path = path
        let database = try SQLiteDatabase(path: path)
        self.database = database
        // The first read tells a file that is no database at all.
        let applicationID = try Self.pragma(database, "application_id")
        let version = try Self.pragma(database, "user_version")
        let tables = try Self.tableCount(database)
        if tables > 0 && (applicationID != Self.applicationID || version != Self.formatVersion) {
            database.close()
            throw PoolStoreError(
                .incompatible,
                "pool store \(path): format \(applicationID == Self.applicationID ? "version \(version)" : "of another application") (this build reads version \(Self.formatVersion))"
            )
        }
        do throws(PoolStoreError) {
            try database.execute("PRAGMA journal_mode=WAL")
            try database.execute("PRAGMA synchronous=NORMAL")
            if tables == 0 {
                try database.execute(
                    """
                    BEGIN IMMEDIATE;
                    CREATE TABLE IF NOT EXISTS notices (
                      source TEXT NOT NULL, id INTEGER NOT NULL, url TEXT NOT NULL, attempts INTEGER NOT NULL,
                      PRIMARY KEY (source, id)) WITHOUT ROWID;
                    PRAGMA application_id=\(Self.applicationID);
                    PRAGMA user_version=\(Self.formatVersion);
                    COMMIT;
                    """)
            }
            selectNotices = try database.prepare("SELECT id, url, attempts FROM notices WHERE source = ?1 ORDER BY id")
            upsertNotice = try database.prepare(
                """
                INSERT INTO notices (source, id, url, attempts) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (source, id) DO UPDATE SET attempts = excluded.attempts
                """)
            deleteNotice = try database.prepare("DELETE FROM notices WHERE source = ?1 AND id = ?2")
        } catch {
            database.close()
            throw error
        }
    }

    /// Opens the store at `path`; a file that cannot be used (unreadable, another format) is
    /// moved aside to `path.unusable-<unix ms>` and a new store is created in its place.
    /// - Parameter now: the suffix of the moved file.
    /// - Returns: the store, and the error of the file moved aside (for the daemon's one log line).
    /// - Throws: ``PoolStoreError`` when even a new file cannot be created.
    public static func open(path: String, now: AdInstant) throws(PoolStoreError) -> (SQLitePoolStore, PoolStoreError?) {
        do {
            return (try SQLitePoolStore(path: path), nil)
        } catch {
            let aside = "\(path).unusable-\(now.unixMilliseconds)"
            if rename(path, aside) != 0 { throw PoolStoreError(.io, "\(error.message); cannot move it aside to \(aside)") }
            for suffix in ["-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            let store = try SQLitePoolStore(path: path)
            return (store, PoolStoreError(error.code, "\(error.message); moved aside to \(aside), starting empty"))
        }
    }

    deinit { close() }

    public func close() { database.close() }

    // MARK: NoticeOutboxStore

    public func pendingNotices(source: String) -> [OutboxNotice] {
        do throws(PoolStoreError) {
            selectNotices.reset()
            try selectNotices.bind(1, source)
            var notices: [OutboxNotice] = []
            while try selectNotices.next() {
                notices.append(
                    OutboxNotice(
                        id: UInt64(bitPattern: selectNotices.int64(0)), url: selectNotices.text(1),
                        attempts: Int(selectNotices.int64(2))))
            }
            return notices
        } catch {
            failed(error)
            return []
        }
    }

    public func putNotice(_ notice: OutboxNotice, source: String) {
        do throws(PoolStoreError) {
            upsertNotice.reset()
            try upsertNotice.bind(1, source)
            upsertNotice.bind(2, Int64(bitPattern: notice.id))
            try upsertNotice.bind(3, notice.url)
            upsertNotice.bind(4, Int64(notice.attempts))
            try upsertNotice.run()
        } catch {
            failed(error)
        }
    }

    public func removeNotice(id: UInt64, source: String) {
        do throws(PoolStoreError) {
            deleteNotice.reset()
            try deleteNotice.bind(1, source)
            deleteNotice.bind(2, Int64(bitPattern: id))
            try deleteNotice.run()
        } catch {
            failed(error)
        }
    }

    /// Notices stored, every source (for Stats and tests).
    public func noticeCount() -> Int {
        Int((try? Self.count(database, "SELECT count(*) FROM notices")) ?? 0)
    }

    // MARK: Helpers

    private func failed(_ error: PoolStoreError) {
        writeFailures += 1
        lastError = error
        onWriteFailure?(error)
    }

    private static func pragma(_ database: SQLiteDatabase, _ name: String) throws(PoolStoreError) -> Int64 {
        try count(database, "PRAGMA \(name)")
    }

    private static func tableCount(_ database: SQLiteDatabase) throws(PoolStoreError) -> Int64 {
        try count(database, "SELECT count(*) FROM sqlite_master WHERE type = 'table'")
    }

    private static func count(_ database: SQLiteDatabase, _ sql: String) throws(PoolStoreError) -> Int64 {
        let statement: SQLiteDatabase.Statement
        do {
            statement = try database.prepare(sql)
        } catch {
            throw PoolStoreError(.unreadable, error.message)
        }
        guard try statement.next() else { return 0 }
        let value = statement.int64(0)
        statement.reset()
        return value
    }
}
