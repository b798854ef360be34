import CSQLite

/// One SQLite connection (`sqlite3 *`): opening, running SQL, mapping SQLite's result codes to ``JournalError``,
/// and closing with its statements.
///
/// Not thread-safe: ``SQLiteJournal`` uses it under its lock. Opened without SQLite's own mutex
/// (`SQLITE_OPEN_NOMUTEX`).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [SQLiteStatement] = []
    private var closed = false

    /// Opens `path` with `flags` (`SQLITE_OPEN_READWRITE`, …) and extended result codes.
    init(path: String, flags: Int32) throws(JournalError) {
        self.path = path
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard rc == SQLITE_OK, let db else {
            let detail = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close(db) }
            throw Self.error(rc, detail: detail, path: path, "opening")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Finalizes the prepared statements and closes the connection (idempotent).
    func close() {
        guard !closed else { return }
        closed = true
        for statement in statements { statement.finalize() }
        statements = []
        // Every statement is finalized and no backup runs, so sqlite3_close cannot be busy.
        let rc = sqlite3_close(handle)
        precondition(rc == SQLITE_OK, "sqlite3_close(\(path)) failed: \(String(cString: sqlite3_errstr(rc)))")
    }

    /// Prepares a statement kept until the connection closes.
    func prepare(_ sql: String) throws(JournalError) -> SQLiteStatement {
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statements.append(statement)
        return statement
    }

    /// Runs SQL text (several statements allowed), ignoring rows.
    func execute(_ sql: String) throws(JournalError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        let detail = message.map { String(cString: $0) }
        sqlite3_free(message)
        guard rc == SQLITE_OK else {
            throw Self.error(rc, detail: detail ?? errorMessage, path: path, "running `\(sql)`")
        }
    }

    /// The rows of a one-column query as text (`PRAGMA quick_check`, `PRAGMA journal_mode=WAL`, …).
    func texts(_ sql: String) throws(JournalError) -> [String] {
        let statement = try SQLiteStatement(connection: self, sql: sql)
        defer { statement.finalize() }
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0)) }
        return rows
    }

    /// The first column of the first row of a query as an integer (0 without rows).
    func integer(_ sql: String) throws(JournalError) -> Int64 {
        let statement = try SQLiteStatement(connection: self, sql: sql)
        defer { statement.finalize() }
        guard try statement.step() else { return 0 }
        let value = statement.int64(0)
        statement.reset()
        return value
    }

    /// Whether a transaction is open (SQLite may roll one back by itself after an I/O error).
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE (cascades not counted).
    var changes: Int { Int(sqlite3_changes(handle)) }

    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// The ``JournalError`` for a failed SQLite call on this connection.
    func error(_ rc: Int32, _ doing: String) -> JournalError {
        Self.error(rc, detail: errorMessage, path: path, doing)
    }

    /// Maps a SQLite result code to a ``JournalError`` whose message names the file and says what to do.
    static func error(_ rc: Int32, detail: String, path: String, _ doing: String) -> JournalError {
        let what = "\(path): \(doing): \(detail) (SQLite code \(rc))"
        switch rc & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return JournalError(
                code: .corrupt,
                message: "\(what). The file is not a Concierge journal or it is damaged: restore it from a backup "
                    + "(`concierge journal backup`), or move it away and create an empty journal with "
                    + "`concierge journal init \(path)` (what it held is then lost).")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return JournalError(
                code: .locked,
                message: "\(what). Another process holds the journal (another broker uses this journal?): stop it, "
                    + "or give this broker a journal of its own.")
        case SQLITE_CANTOPEN:
            return JournalError(
                code: .unreadable,
                message: "\(what). Check that the file and its directory exist and are readable and writable.")
        case SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH:
            return JournalError(
                code: .unreadable,
                message: "\(what). The journal, its directory and its -wal and -shm files must be readable and "
                    + "writable by this user.")
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_RANGE:
            return JournalError(
                code: .invalidOperation, message: "\(what). The commit was rolled back: nothing of it is written.")
        case SQLITE_FULL:
            return JournalError(
                code: .io, message: "\(what). The disk is full: free space on it; the commit was rolled back.")
        default:
            return JournalError(
                code: .io,
                message: "\(what). Check the disk (free space, I/O errors in the kernel log); the commit was rolled "
                    + "back.")
        }
    }
}
