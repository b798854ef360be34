import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite journal's schema (version 2) and the checks every open runs on a file before trusting it.
enum SQLiteJournalSchema {
    /// The schema version this build writes and reads (`PRAGMA user_version`).
    static let version: Int64 = 2
    /// The oldest schema version this build opens: an older one is brought up to ``version`` in place when a broker
    /// opens it (``migrate(_:from:)``), so that an existing journal keeps working after an upgrade.
    static let oldestVersion: Int64 = 1
    /// `PRAGMA application_id` of a Concierge journal: "Conc".
    static let applicationID: Int64 = 0x436F_6E63

    /// The tables. Request ids are SQLite integers (at most `Int64.max`); listeners go with their open request.
    ///
    /// Written for cheap commits (one fsync'ed WAL append of the pages a commit touches): a request is one row of
    /// `requests` from its acceptance until its result expires. It is inserted at the end of the table when
    /// accepted; when it ends, its result (for its own key) is written over the request in place (`body` then holds
    /// the result's body and `stored_at` is set), so a commit touches a few pages at the end of the table, and the
    /// end of the index of ended rows by time. The other results (of duplicates attached to a request, or stored
    /// without one) go to `results`. Neither has an index on the result's key (client request ids are random
    /// bytes: such an index costs a random page per result): a result replacing an earlier one for the same key is
    /// written after it, the earlier one stays until it expires, and recovery keeps the last one written per key.
    /// `result_seq` (rows of `requests`) and `seq` (rows of `results`) number results in the order they were
    /// written, from one counter; `meta.result_seq_reserved` is above every number used, advanced a million at a
    /// time. `seq` keeps key records and conversations in the order they were last written.
    static let create = """
        BEGIN;
        CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT, WITHOUT ROWID;
        INSERT INTO meta(key, value) VALUES('next_request_id', 1), ('result_seq_reserved', 1);
        INSERT INTO meta(key, value) VALUES('fingerprint_seed_1', random()), ('fingerprint_seed_2', random());
        CREATE TABLE requests(
            id INTEGER PRIMARY KEY,
            client BLOB NOT NULL, request_id BLOB NOT NULL, identity BLOB NOT NULL, intent_type BLOB NOT NULL,
            phase TEXT NOT NULL, body BLOB NOT NULL, deadline_ms INTEGER NOT NULL, accepted_at INTEGER NOT NULL,
            idempotency_key BLOB, attempt INTEGER NOT NULL, version INTEGER NOT NULL,
            handle_dispatched INTEGER NOT NULL DEFAULT 0,
            result_seq INTEGER, is_error INTEGER, result_phase TEXT, stored_at INTEGER,
            CHECK((stored_at IS NULL) = (result_seq IS NULL))
        ) STRICT;
        CREATE INDEX requests_ended ON requests(stored_at) WHERE stored_at IS NOT NULL;
        CREATE TABLE listeners(
            seq INTEGER PRIMARY KEY,
            request INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
            client BLOB NOT NULL, request_id BLOB NOT NULL, version INTEGER NOT NULL,
            act_at INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE INDEX listeners_by_request ON listeners(request);
        CREATE TABLE results(
            seq INTEGER PRIMARY KEY,
            client BLOB NOT NULL, request_id BLOB NOT NULL, version INTEGER NOT NULL,
            is_error INTEGER NOT NULL, phase TEXT NOT NULL, body BLOB NOT NULL, stored_at INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX results_by_time ON results(stored_at);
        CREATE TABLE key_records(
            seq INTEGER PRIMARY KEY,
            identity BLOB NOT NULL, intent_type BLOB NOT NULL, key BLOB NOT NULL, fingerprint BLOB NOT NULL,
            attempts INTEGER NOT NULL, state INTEGER NOT NULL, request INTEGER, is_error INTEGER, phase TEXT,
            body BLOB, ended_at INTEGER,
            UNIQUE(identity, intent_type, key)
        ) STRICT;
        CREATE INDEX key_records_by_end ON key_records(ended_at);
        \(createConversations)
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = \(version);
        COMMIT;
        """

    /// The table of version 2: one row per (scope, id), the broker's JSON document of the conversation in `state`.
    /// `INSERT OR REPLACE` gives a replaced row a new `seq` (above every other), as for key records.
    static let createConversations = """
        CREATE TABLE conversations(
            seq INTEGER PRIMARY KEY,
            scope BLOB NOT NULL, id BLOB NOT NULL, state BLOB NOT NULL, updated_at INTEGER NOT NULL,
            UNIQUE(scope, id)
        ) STRICT;
        """

    /// What brings a journal of each older version to the next one, keyed by the older version; each runs in the
    /// transaction of ``migrate(_:from:)``, which then sets `user_version`.
    static let upgrades: [Int64: String] = [1: createConversations]

    /// Brings the journal open on `connection` from schema `version` to ``version``, in one transaction (a crash
    /// midway leaves it at `version`, and the next open migrates again). Only a broker's open runs it, under the
    /// journal's lock; `check` and `backup` read an older version as it is.
    static func migrate(_ connection: SQLiteConnection, from version: Int64) throws(JournalError) {
        guard version < Self.version else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(JournalError) {
            for step in version..<Self.version {
                guard let sql = upgrades[step] else {
                    throw JournalError(
                        code: .corrupt,
                        message: "\(connection.path): no upgrade from schema version \(step) exists in this build.")
                }
                try connection.execute(sql)
            }
            try connection.execute("PRAGMA user_version = \(Self.version)")
            try connection.execute("COMMIT")
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Checks a file before SQLite opens it: it exists, is a regular file, and is readable and writable.
    static func checkFile(_ path: String) throws(JournalError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let errno = csqlite_errno()
            if errno == ENOENT {
                throw JournalError(
                    code: .missing,
                    message: "\(path) does not exist. A broker never creates its journal: create it with "
                        + "`concierge journal init \(path)` (or fix the path, or mount the volume it lives on).")
            }
            throw JournalError(
                code: .unreadable,
                message: "\(path): \(String(cString: strerror(errno))). Check the path's permissions.")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw JournalError(
                code: .unreadable,
                message: "\(path) is not a regular file (a directory?). Give the path of a journal file made by "
                    + "`concierge journal init`.")
        }
        guard access(path, R_OK | W_OK) == 0 else {
            throw JournalError(
                code: .unreadable,
                message:
                    "\(path) cannot be read and written by this user (\(String(cString: strerror(csqlite_errno())))). "
                    + "Fix its owner or mode (the journal, its directory and its -wal and -shm files).")
        }
    }

    /// Checks an open file: a Concierge journal (application id), of a version this build reads, that passes
    /// `PRAGMA quick_check`. Runs before anything writes to the file (a zero-length file stays untouched).
    /// Returns the schema version: ``version``, or an older one that ``migrate(_:from:)`` upgrades.
    @discardableResult
    static func validate(_ connection: SQLiteConnection) throws(JournalError) -> Int64 {
        let path = connection.path
        let application = try connection.integer("PRAGMA application_id")
        let version = try connection.integer("PRAGMA user_version")
        guard application == applicationID else {
            let size = fileSize(path)
            throw JournalError(
                code: .corrupt,
                message: "\(path) is not a Concierge journal ("
                    + (size == 0 ? "an empty file" : "a SQLite database of another application")
                    + "). Give the path of a journal made by `concierge journal init`, or move this file away and "
                    + "create one with `concierge journal init \(path)`.")
        }
        guard version <= Self.version else {
            throw JournalError(
                code: .newerVersion,
                message: "\(path) has schema version \(version), and this Concierge reads version \(Self.version) at "
                    + "most: run the newer Concierge that wrote it.")
        }
        guard version >= oldestVersion else {
            throw JournalError(
                code: .corrupt, message: "\(path) has schema version \(version), which no Concierge writes: damaged.")
        }
        let problems = try connection.texts("PRAGMA quick_check")
        guard problems == ["ok"] else {
            throw JournalError(
                code: .corrupt,
                message: "\(path) failed its integrity check (\(problems.prefix(3).joined(separator: "; "))). "
                    + "Restore it from a backup (`concierge journal backup`), or move it away and create an empty "
                    + "journal with `concierge journal init \(path)` (what it held is then lost).")
        }
        return version
    }

    /// The size of a file in bytes, or nil if it cannot be read.
    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Creates `path` exclusively (`O_EXCL`) with mode 0600, refusing an existing file or a leftover `-wal`
    /// (which SQLite would otherwise apply to the new file).
    static func createFile(_ path: String) throws(JournalError) {
        guard fileSize(path + "-wal") == nil else {
            throw JournalError(
                code: .exists,
                message: "\(path)-wal exists: it belongs to an earlier journal at \(path). Move it away first.")
        }
        let descriptor = csqlite_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let errno = csqlite_errno()
            if errno == EEXIST {
                throw JournalError(
                    code: .exists,
                    message: "\(path) exists already: existing files are never replaced. Choose "
                        + "another path, or move the file away first.")
            }
            throw JournalError(
                code: errno == EACCES || errno == EROFS || errno == EPERM ? .unreadable : .io,
                message: "\(path) cannot be created: \(String(cString: strerror(errno))).")
        }
        close(descriptor)
    }

    /// Removes a journal file and SQLite's side files (after a failed create).
    static func removeFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}
