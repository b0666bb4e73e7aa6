import AdLoaderCore
internal import CSQLite

/// Why the pool store failed: the file, and SQLite's or the format's message.
public struct PoolStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        private enum Wrapped: Hashable, Sendable { case unreadable, incompatible, io, locked }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }
        /// Not a SQLite database, or corrupt.
        public static let unreadable = Code(.unreadable)
        /// A pool store of another format version.
        public static let incompatible = Code(.incompatible)
        /// A read or write failed.
        public static let io = Code(.io)
        /// Another process holds the store (``PoolStoreLock``).
        public static let locked = Code(.locked)
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A SQLite connection with prepared statements: the small part of SQLite the pool store uses.
///
/// - Important: loop-confined.
final class SQLiteDatabase {
    let path: String
    private(set) var handle: OpaquePointer?

    init(path: String, busyTimeout: Duration = .seconds(5)) throws(PoolStoreError) {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard opened == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            close()
            throw PoolStoreError(.unreadable, "sqlite \(path): \(message)")
        }
        sqlite3_busy_timeout(db, Int32(clamping: busyTimeout.milliseconds))
    }

    deinit { close() }

    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func execute(_ sql: String, code: PoolStoreError.Code = .io) throws(PoolStoreError) {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw PoolStoreError(code, "sqlite \(path): \(message)")
        }
    }

    func prepare(_ sql: String) throws(PoolStoreError) -> Statement {
        var statement: OpaquePointer?
        if sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) != SQLITE_OK {
            throw failure("prepare")
        }
        return Statement(database: self, pointer: statement)
    }

    func failure(_ operation: String, code: PoolStoreError.Code = .io) -> PoolStoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return PoolStoreError(code, "sqlite \(path): \(operation): \(message)")
    }

    /// One prepared statement; parameters are 1-based, columns 0-based.
    final class Statement {
        unowned let database: SQLiteDatabase
        private var pointer: OpaquePointer?

        init(database: SQLiteDatabase, pointer: OpaquePointer?) {
            self.database = database
            self.pointer = pointer
        }

        deinit { sqlite3_finalize(pointer) }

        func reset() { sqlite3_reset(pointer) }

        func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(pointer, index, value) }

        func bindNull(_ index: Int32) { sqlite3_bind_null(pointer, index) }

        func bind(_ index: Int32, _ text: String) throws(PoolStoreError) {
            var text = text
            let result = text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) {
                    CSQLite_bind_text(pointer, index, $0.baseAddress, Int32(utf8.count))
                }
            }
            if result != SQLITE_OK { throw database.failure("bind") }
        }

        func bind(_ index: Int32, bytes: [UInt8]) throws(PoolStoreError) {
            let result = bytes.withUnsafeBytes { CSQLite_bind_blob(pointer, index, $0.baseAddress, Int32($0.count)) }
            if result != SQLITE_OK { throw database.failure("bind") }
        }

        /// Runs a statement that returns no rows, and resets it.
        func run() throws(PoolStoreError) {
            defer { sqlite3_reset(pointer) }
            let result = sqlite3_step(pointer)
            if result != SQLITE_DONE && result != SQLITE_ROW { throw database.failure("step") }
        }

        /// Steps a query: true with a row to read, false when there is none (reset then).
        func next() throws(PoolStoreError) -> Bool {
            switch sqlite3_step(pointer) {
            case SQLITE_ROW: return true
            case SQLITE_DONE:
                sqlite3_reset(pointer)
                return false
            default:
                let error = database.failure("query", code: .unreadable)
                sqlite3_reset(pointer)
                throw error
            }
        }

        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }

        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(pointer, column) else { return "" }
            let count = Int(sqlite3_column_bytes(pointer, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }

        func bytes(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(pointer, column))
            guard count > 0, let base = sqlite3_column_blob(pointer, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: base, count: count))
        }
    }
}
