import CSQLite
import Synchronization

/// A journal in a SQLite file on this host (WAL mode), for one broker at a time.
///
/// `SQLiteJournal.create(path:)` makes a journal (`concierge journal init`); `init(path:sync:)` opens an existing
/// one only, so a mistyped path or a lost mount is an error, never a silent fresh start. Opening checks that the
/// file is a Concierge journal of a version this build reads and runs `PRAGMA quick_check` (a journal of schema
/// version 1 is then upgraded to version 2 in place, in one transaction: a `conversations` table); it takes an exclusive
/// `flock` on `<path>-lock` that it holds until ``close()``, so a second broker on the same journal fails with
/// ``JournalError/Code/locked``.
///
/// A journal is four files: `<path>`, and while it is open SQLite's `<path>-wal` and `<path>-shm`, plus the lock
/// file `<path>-lock`. Copy a journal with ``backup(path:to:)`` (consistent while a broker writes it), never with
/// `cp`.
public final class SQLiteJournal: Journal {
    private let store: Mutex<SQLiteJournalStore>

    /// The journal's file.
    public let path: String
    /// When commits are forced to disk.
    public let sync: JournalSync

    /// Opens the existing journal at `path`.
    ///
    /// - Throws: ``JournalError`` with code `journal-missing`, `journal-unreadable`, `journal-corrupt` (not a
    ///   journal, or damaged), `journal-newer-version`, `journal-locked` (another broker has it open) or
    ///   `journal-io`.
    public init(path: String, sync: JournalSync = .everyCommit) throws(JournalError) {
        self.path = path
        self.sync = sync
        store = Mutex(try SQLiteJournalStore(path: path, sync: sync))
    }

    deinit { close() }

    /// Creates an empty journal (schema version 2) at `path`: `concierge journal init`.
    ///
    /// - Throws: ``JournalError`` with code `journal-exists` if `path` exists (existing files are never replaced),
    ///   `journal-unreadable` or `journal-io` if it cannot be created.
    public static func create(path: String) throws(JournalError) {
        try SQLiteJournalSchema.createFile(path)
        do throws(JournalError) {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.execute(SQLiteJournalSchema.create)
            let mode = try connection.texts("PRAGMA journal_mode = WAL")
            guard mode == ["wal"] else {
                throw JournalError(code: .io, message: "\(path): cannot switch to WAL mode (SQLite answered \(mode)).")
            }
            connection.close()
        } catch {
            SQLiteJournalSchema.removeFiles(path)
            throw error
        }
    }

    public func recover() throws(JournalError) -> JournalState {
        try store.withLock { store throws(JournalError) in try store.recover() }
    }

    public var fingerprintSeeds: [UInt64] { store.withLock { $0.fingerprintSeeds } }

    public func commit(_ operations: [JournalOperation]) throws(JournalError) {
        try store.withLock { store throws(JournalError) in try store.commit(operations) }
    }

    public func syncIfDue() throws(JournalError) {
        try store.withLock { store throws(JournalError) in try store.syncIfDue() }
    }

    public func close() {
        store.withLock { $0.close() }
    }

    public var statistics: JournalStatistics {
        store.withLock { $0.statistics }
    }
}
