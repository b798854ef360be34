import CSQLite

/// A prepared statement of one ``SQLiteConnection``, prepared once and reused: bind, step, reset.
///
/// Not thread-safe; its connection finalizes it on close.
final class SQLiteStatement {
    private(set) var handle: OpaquePointer?
    let sql: String
    unowned let connection: SQLiteConnection

    init(connection: SQLiteConnection, sql: String) throws(JournalError) {
        self.connection = connection
        self.sql = sql
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.error(rc, "preparing `\(sql)`")
        }
        handle = statement
    }

    /// Finalizes the statement (idempotent).
    func finalize() {
        guard let handle else { return }
        sqlite3_finalize(handle)  // returns the last step's error, already reported
        self.handle = nil
    }

    // MARK: Binding (parameters count from 1)

    func bind(_ index: Int32, _ value: Int64) throws(JournalError) {
        try check(sqlite3_bind_int64(handle, index, value), "binding")
    }

    func bind(_ index: Int32, _ value: Int) throws(JournalError) { try bind(index, Int64(value)) }

    func bind(_ index: Int32, _ value: Bool) throws(JournalError) { try bind(index, Int64(value ? 1 : 0)) }

    /// Binds a blob (an empty array is a zero-length blob, never NULL); SQLite copies the bytes.
    func bind(_ index: Int32, _ bytes: [UInt8]) throws(JournalError) {
        guard !bytes.isEmpty else {
            try check(sqlite3_bind_zeroblob(handle, index, 0), "binding")
            return
        }
        guard bytes.count <= Int(Int32.max) else {
            throw JournalError(
                code: .invalidOperation, message: "\(connection.path): a value of \(bytes.count) bytes is too large")
        }
        let rc = bytes.withUnsafeBytes {
            csqlite_bind_blob_transient(handle, index, $0.baseAddress, Int32($0.count))
        }
        try check(rc, "binding")
    }

    /// Binds a blob, or NULL for nil.
    func bind(_ index: Int32, _ bytes: [UInt8]?) throws(JournalError) {
        if let bytes { try bind(index, bytes) } else { try bindNull(index) }
    }

    /// Binds text (an empty string is empty text, never NULL); SQLite copies the bytes.
    func bind(_ index: Int32, _ text: String) throws(JournalError) {
        let count = text.utf8.count
        guard count <= Int(Int32.max) else {
            throw JournalError(
                code: .invalidOperation, message: "\(connection.path): a text of \(count) bytes is too large")
        }
        let rc = text.withCString { csqlite_bind_text_transient(handle, index, $0, Int32(count)) }
        try check(rc, "binding")
    }

    func bindNull(_ index: Int32) throws(JournalError) {
        try check(sqlite3_bind_null(handle, index), "binding")
    }

    // MARK: Stepping

    /// Runs a statement that returns no rows, and resets it.
    func run() throws(JournalError) {
        let rc = sqlite3_step(handle)
        sqlite3_reset(handle)  // returns the step's error again
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw connection.error(rc, "running `\(sql)`") }
    }

    /// Steps once: true when a row is available, false when done (then the statement is reset).
    func step() throws(JournalError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard rc == SQLITE_DONE else { throw connection.error(rc, "running `\(sql)`") }
        return false
    }

    /// Resets a statement whose rows were not all read.
    func reset() { sqlite3_reset(handle) }

    // MARK: Columns (count from 0)

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func blob(_ column: Int32) -> [UInt8] {
        let pointer = sqlite3_column_blob(handle, column)  // before sqlite3_column_bytes, as SQLite asks
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func optionalBlob(_ column: Int32) -> [UInt8]? { isNull(column) ? nil : blob(column) }

    func text(_ column: Int32) -> String {
        let pointer = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    private func check(_ rc: Int32, _ what: String) throws(JournalError) {
        guard rc == SQLITE_OK else { throw connection.error(rc, "\(what) for `\(sql)`") }
    }
}
