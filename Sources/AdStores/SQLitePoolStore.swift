public import AdLoaderCore
internal import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The pool store in a SQLite file (`poolStore.sqlitePath`, next to the app-open store): what
/// a restart keeps: the pools suspended at a clean stop (every pooled ad with its source
/// context, leases with their ids, slots and timeouts) and the outbox of notices not yet
/// delivered (``NoticeOutboxStore``).
///
/// A suspension is written in one transaction at the stop and taken (read whole, decoded
/// whole, then deleted in one transaction) at the next start, before any call is served: a
/// crash after the start never restores it a second time, so no ad is lent twice.
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
    /// 2: notices carry `sending` (a try under way). 3: notices carry the device of the show
    /// a billing notice is for (`device_ip`, `device_user_agent`: its forwarded headers). A
    /// version 1 or 2 file is upgraded in place, its notices kept (without a device).
    public static let formatVersion: Int64 = 3
    /// "ADLP" in `PRAGMA application_id`: the file is a pool store.
    static let applicationID: Int64 = 0x4144_4C50

    public let path: String
    private let database: SQLiteDatabase
    private let selectNotices: SQLiteDatabase.Statement
    private let upsertNotice: SQLiteDatabase.Statement
    private let deleteNotice: SQLiteDatabase.Statement
    private let insertAd: SQLiteDatabase.Statement
    private let insertPool: SQLiteDatabase.Statement
    /// Write failures so far (each also in ``lastError``); the daemon logs and counts them.
    public private(set) var writeFailures: UInt64 = 0
    public private(set) var lastError: PoolStoreError?
    /// Called with each write failure (the daemon logs it, rate-limited).
    public var onWriteFailure: ((PoolStoreError) -> Void)?
    /// Called before a notice is stored: the pool journal's commit (``PoolJournal/commit()``).
    public var beforeNoticeWrite: (() -> Void)?

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
        let upgrade = tables > 0 && applicationID == Self.applicationID && (version == 1 || version == 2)
        // The columns a version 1 or 2 file lacks, added in the transaction that stamps it 3.
        var added = ""
        if upgrade && version == 1 { added += "\nALTER TABLE notices ADD COLUMN sending INTEGER NOT NULL DEFAULT 0;" }
        if upgrade {
            added += "\nALTER TABLE notices ADD COLUMN device_ip TEXT NOT NULL DEFAULT '';"
            added += "\nALTER TABLE notices ADD COLUMN device_user_agent TEXT NOT NULL DEFAULT '';"
        }
        if tables > 0 && !upgrade && (applicationID != Self.applicationID || version != Self.formatVersion) {
            database.close()
            throw PoolStoreError(
                .incompatible,
                "pool store \(path): format \(applicationID == Self.applicationID ? "version \(version)" : "of another application") (this build reads version \(Self.formatVersion))"
            )
        }
        do throws(PoolStoreError) {
            try database.execute("PRAGMA journal_mode=WAL")
            try database.execute("PRAGMA synchronous=NORMAL")
            try database.execute(
                """
                BEGIN IMMEDIATE;
                CREATE TABLE IF NOT EXISTS notices (
                  source TEXT NOT NULL, id INTEGER NOT NULL, url TEXT NOT NULL, attempts INTEGER NOT NULL,
                  sending INTEGER NOT NULL DEFAULT 0,
                  device_ip TEXT NOT NULL DEFAULT '', device_user_agent TEXT NOT NULL DEFAULT '',
                  PRIMARY KEY (source, id)) WITHOUT ROWID;\(added)
                CREATE TABLE IF NOT EXISTS suspended_pools (seq INTEGER PRIMARY KEY, header BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS suspended_ads (
                  seq INTEGER PRIMARY KEY, pool_seq INTEGER NOT NULL, record BLOB NOT NULL,
                  lease_id INTEGER, lease_slot TEXT, lease_expires_ms INTEGER);
                PRAGMA application_id=\(Self.applicationID);
                PRAGMA user_version=\(Self.formatVersion);
                COMMIT;
                """)
            selectNotices = try database.prepare(
                "SELECT id, url, attempts, sending, device_ip, device_user_agent FROM notices WHERE source = ?1 ORDER BY id"
            )
            upsertNotice = try database.prepare(
                """
                INSERT INTO notices (source, id, url, attempts, sending, device_ip, device_user_agent)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (source, id) DO UPDATE SET attempts = excluded.attempts, sending = excluded.sending
                """)
            deleteNotice = try database.prepare("DELETE FROM notices WHERE source = ?1 AND id = ?2")
            insertPool = try database.prepare("INSERT INTO suspended_pools (seq, header) VALUES (?1, ?2)")
            insertAd = try database.prepare(
                "INSERT INTO suspended_ads (seq, pool_seq, record, lease_id, lease_slot, lease_expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            )
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
            if rename(path, aside) != 0 {
                throw PoolStoreError(.io, "\(error.message); cannot move it aside to \(aside)")
            }
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
                        attempts: Int(selectNotices.int64(2)),
                        device: ImpressionDevice(ip: selectNotices.text(4), userAgent: selectNotices.text(5)),
                        sending: selectNotices.int64(3) != 0))
            }
            return notices
        } catch {
            failed(error)
            return []
        }
    }

    public func putNotice(_ notice: OutboxNotice, source: String) {
        // The pool changes that led to this notice (a shown Return) are written first: a
        // notice is never kept for a Return the pools would forget.
        beforeNoticeWrite?()
        do throws(PoolStoreError) {
            upsertNotice.reset()
            try upsertNotice.bind(1, source)
            upsertNotice.bind(2, Int64(bitPattern: notice.id))
            try upsertNotice.bind(3, notice.url)
            upsertNotice.bind(4, Int64(notice.attempts))
            upsertNotice.bind(5, notice.sending ? 1 : 0)
            try upsertNotice.bind(6, notice.device.ip)
            try upsertNotice.bind(7, notice.device.userAgent)
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

    // MARK: Suspended pools

    /// Writes the pools' snapshots in one transaction, replacing any earlier suspension.
    /// - Returns: the bytes of the records written.
    /// - Throws: ``PoolStoreError`` `.io`; nothing is written then.
    @discardableResult
    public func saveSuspension(_ snapshots: [PoolSnapshot]) throws(PoolStoreError) -> Int {
        try database.execute("BEGIN IMMEDIATE")
        var bytes = 0
        var seq: Int64 = 0
        do throws(PoolStoreError) {
            try database.execute("DELETE FROM suspended_ads; DELETE FROM suspended_pools")
            for (poolIndex, snapshot) in snapshots.enumerated() {
                let header = StoreRecordCodec.encodePool(snapshot)
                bytes += header.count
                insertPool.reset()
                insertPool.bind(1, Int64(poolIndex))
                try insertPool.bind(2, bytes: header)
                try insertPool.run()
                func put(_ pooled: PoolSnapshot.PooledAd, lease: PoolSnapshot.LeasedAd?) throws(PoolStoreError) {
                    let record = StoreRecordCodec.encode(pooled.ad, context: pooled.sourceState)
                    bytes += record.count
                    insertAd.reset()
                    insertAd.bind(1, seq)
                    seq += 1
                    insertAd.bind(2, Int64(poolIndex))
                    try insertAd.bind(3, bytes: record)
                    if let lease {
                        insertAd.bind(4, Int64(bitPattern: lease.leaseID))
                        if let slot = lease.slot { try insertAd.bind(5, slot) } else { insertAd.bindNull(5) }
                        insertAd.bind(6, lease.expiresAt.unixMilliseconds)
                    } else {
                        insertAd.bindNull(4)
                        insertAd.bindNull(5)
                        insertAd.bindNull(6)
                    }
                    try insertAd.run()
                }
                for pooled in snapshot.ads { try put(pooled, lease: nil) }
                for leased in snapshot.leases { try put(leased.pooled, lease: leased) }
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        return bytes
    }

    /// Reads the suspension a clean stop left, whole, and deletes it (committed before this
    /// returns): nil when there is none.
    /// - Throws: ``PoolStoreError`` `.unreadable` when any record does not decode: the
    ///   suspension is deleted too and nothing is restored (never half of it).
    public func takeSuspension() throws(PoolStoreError) -> [PoolSnapshot]? {
        let result: Result<[PoolSnapshot]?, PoolStoreError>
        do {
            result = .success(try loadSuspension())
        } catch {
            result = .failure(error)
        }
        try deleteSuspension()
        return try result.get()
    }

    /// Deletes the suspension (committed before this returns), once what it held is safe
    /// elsewhere (the daemon's pool journal has its checkpoint).
    public func deleteSuspension() throws(PoolStoreError) {
        try database.execute("BEGIN IMMEDIATE; DELETE FROM suspended_ads; DELETE FROM suspended_pools; COMMIT;")
    }

    /// Reads the suspension a clean stop left, whole, leaving it in the store: nil when there
    /// is none.
    /// - Throws: ``PoolStoreError`` `.unreadable` when any record does not decode.
    public func loadSuspension() throws(PoolStoreError) -> [PoolSnapshot]? {
        var snapshots: [PoolSnapshot] = []
        var failure: PoolStoreError?
        var found = false
        do throws(PoolStoreError) {
            let pools = try database.prepare("SELECT seq, header FROM suspended_pools ORDER BY seq")
            var index: [Int64: Int] = [:]
            while try pools.next() {
                found = true
                do {
                    snapshots.append(try StoreRecordCodec.decodePool(pools.bytes(1)))
                } catch {
                    pools.reset()
                    throw PoolStoreError(
                        .unreadable, "pool store \(path): suspended pool \(snapshots.count + 1): \(error.message)")
                }
                index[pools.int64(0)] = snapshots.count - 1
            }
            let ads = try database.prepare(
                "SELECT pool_seq, record, lease_id, lease_slot, lease_expires_ms, lease_id IS NULL, lease_slot IS NULL FROM suspended_ads ORDER BY seq"
            )
            var count = 0
            while try ads.next() {
                found = true
                count += 1
                guard let position = index[ads.int64(0)] else {
                    ads.reset()
                    throw PoolStoreError(.unreadable, "pool store \(path): suspended ad \(count) of no pool")
                }
                let decoded: (ad: Ad, context: [UInt8]?)
                do {
                    decoded = try StoreRecordCodec.decodeAd(ads.bytes(1))
                } catch {
                    ads.reset()
                    throw PoolStoreError(.unreadable, "pool store \(path): suspended ad \(count): \(error.message)")
                }
                let pooled = PoolSnapshot.PooledAd(ad: decoded.ad, sourceState: decoded.context)
                if ads.int64(5) == 0 {
                    snapshots[position].leases.append(
                        .init(
                            leaseID: UInt64(bitPattern: ads.int64(2)), slot: ads.int64(6) == 0 ? ads.text(3) : nil,
                            expiresAt: AdInstant(unixMilliseconds: ads.int64(4)), pooled: pooled))
                } else {
                    snapshots[position].ads.append(pooled)
                }
            }
        } catch {
            failure = error
        }
        if let failure { throw failure }
        return found ? snapshots : nil
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
