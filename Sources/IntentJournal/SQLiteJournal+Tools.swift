import CSQLite

extension SQLiteJournal {
    /// Checks the journal at `path` without taking its lock (a broker may be writing it): that it is a Concierge
    /// journal of a version this build reads and passes `PRAGMA quick_check`; returns what it holds.
    ///
    /// - Throws: ``JournalError`` as ``init(path:sync:)`` does, except `journal-locked`.
    public static func check(path: String) throws(JournalError) -> JournalSummary {
        try SQLiteJournalSchema.checkFile(path)
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        defer { connection.close() }
        sqlite3_busy_timeout(connection.handle, 5000)
        try connection.execute("BEGIN")  // one snapshot for every count
        defer { try? connection.execute("COMMIT") }
        let version = try SQLiteJournalSchema.validate(connection)
        let next = try connection.integer("SELECT value FROM meta WHERE key = 'next_request_id'")
        // Ended requests keep their row (holding their result) until the result expires.
        let highest = try connection.integer("SELECT coalesce(max(id), 0) FROM requests")
        return JournalSummary(
            schemaVersion: Int(version),
            openRequests: Int(try connection.integer("SELECT count(*) FROM requests WHERE stored_at IS NULL")),
            handleDispatched: Int(
                try connection.integer(
                    "SELECT count(*) FROM requests WHERE stored_at IS NULL AND handle_dispatched != 0")),
            listeners: Int(try connection.integer("SELECT count(*) FROM listeners")),
            // A replaced result stays until it expires: count keys, as recovery does.
            results: Int(
                try connection.integer(
                    """
                    SELECT count(*) FROM (
                        SELECT client, request_id, version FROM requests WHERE stored_at IS NOT NULL
                        UNION SELECT client, request_id, version FROM results)
                    """)),
            keyRecords: Int(try connection.integer("SELECT count(*) FROM key_records")),
            // A journal of version 1 has no conversations table until a broker opens (and upgrades) it.
            conversations: version >= 2 ? Int(try connection.integer("SELECT count(*) FROM conversations")) : 0,
            nextRequestID: UInt64(max(next, highest + 1, 1)),
            fileBytes: SQLiteJournalSchema.fileSize(path) ?? 0)
    }

    /// Copies the journal at `path` to a new file `destination` with SQLite's online backup API: the copy is one
    /// consistent snapshot even while a broker writes the journal. The copy is checked (`PRAGMA quick_check`) and
    /// opens as a journal of its own.
    ///
    /// - Throws: ``JournalError``: `journal-exists` if `destination` exists (it is never replaced), or what
    ///   opening `path` or writing `destination` failed with. A failed backup leaves no destination file.
    public static func backup(path: String, to destination: String) throws(JournalError) {
        try SQLiteJournalSchema.checkFile(path)
        let source = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        defer { source.close() }
        sqlite3_busy_timeout(source.handle, 5000)
        try source.execute("BEGIN")
        try SQLiteJournalSchema.validate(source)
        try source.execute("COMMIT")
        try SQLiteJournalSchema.createFile(destination)
        do throws(JournalError) {
            let target = try SQLiteConnection(path: destination, flags: SQLITE_OPEN_READWRITE)
            defer { target.close() }
            try target.execute("PRAGMA synchronous = FULL")
            try copy(from: source, to: target)
            try SQLiteJournalSchema.validate(target)
        } catch {
            SQLiteJournalSchema.removeFiles(destination)
            throw error
        }
    }

    /// Copies every page in one step (one read transaction on the source: a consistent snapshot), retrying while
    /// the source is busy for a moment.
    private static func copy(from source: SQLiteConnection, to target: SQLiteConnection) throws(JournalError) {
        guard let backup = sqlite3_backup_init(target.handle, "main", source.handle, "main") else {
            throw target.error(sqlite3_errcode(target.handle), "starting a backup from \(source.path)")
        }
        var rc: Int32
        var attempts = 0
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            let primary = rc & 0xFF
            if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
                attempts += 1
                if attempts > 50 { break }
                sqlite3_sleep(100)
            } else if rc != SQLITE_OK {
                break
            }
        } while rc != SQLITE_DONE
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else { throw target.error(rc, "copying \(source.path)") }
        guard finish == SQLITE_OK else { throw target.error(finish, "finishing the copy of \(source.path)") }
    }
}
