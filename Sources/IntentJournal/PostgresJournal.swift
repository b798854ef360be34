#if PostgreSQL
    import Synchronization

    /// A journal in a PostgreSQL database, shared by an active broker and its standbys (failover).
    ///
    /// `PostgresJournal.create(url:)` makes the schema (`concierge journal init postgres://…`); `init(url:sync:)` opens
    /// an existing journal only. Opening connects, checks the schema version (`journal-missing` without a journal,
    /// `journal-newer-version` for a newer one) and takes leadership: the PostgreSQL **session advisory lock**
    /// `pg_try_advisory_lock(0x436F6E634A6E6C31)` on its connection, which PostgreSQL releases when that session ends.
    /// Another session holding it gives `journal-locked`.
    ///
    /// Every ``commit(_:)`` is one transaction that first checks, through `pg_locks`, that this session still holds
    /// the lock (a fenced write); a lost connection means a lost session, so the commit throws `journal-unavailable`
    /// and the journal stays unusable (it never reconnects behind the caller's back, since another broker may have taken
    /// over: the broker opens a new one, which takes the lock again or finds another broker active). If the connection fails while `COMMIT` is in flight, that commit may or may not
    /// be written; either way nothing was acknowledged before it returned.
    ///
    /// Sync policy: ``JournalSync/everyCommit`` sets `synchronous_commit = on` (each commit is durable on the server
    /// when it returns); ``JournalSync/interval(_:)`` sets `synchronous_commit = off`: a commit is visible at once
    /// and survives a broker crash, but a crash of the PostgreSQL server can lose commits of the last 3 ×
    /// `wal_writer_delay` (the server's setting, 200 ms by default), whatever the interval given.
    ///
    /// Threads: the journal blocks its caller until PostgreSQL answers (it waits on the `EventLoopFuture`s of
    /// PostgresNIO, whose I/O runs on `MultiThreadedEventLoopGroup.singleton`). Call it from an ordinary thread (the
    /// broker's loop) or a task, never from a SwiftNIO event loop thread.
    ///
    /// The URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or `postgresql://`), with `?sslmode=require` (TLS,
    /// certificate verified) or `prefer`; otherwise plain TCP. Messages name the URL without its password.
    public final class PostgresJournal: Journal {
        private let store: Mutex<PostgresJournalStore>

        /// The URL without its password.
        public let name: String
        /// When commits are forced to disk.
        public let sync: JournalSync

        /// Connects to the journal at `url` and takes leadership.
        ///
        /// - Throws: ``JournalError`` with code `journal-unavailable` (PostgreSQL cannot be reached, or refuses this
        ///   user), `journal-missing` (no journal in that database), `journal-newer-version`, `journal-corrupt` or
        ///   `journal-locked` (another broker is active).
        ///
        /// - Parameter standingBy: for a standby: called each time (every 250 ms) another session holds the leader
        ///   lock; return true to keep waiting on the same connection, false to give up with `journal-locked`. Nil (the
        ///   default) gives up at once.
        public init(url: String, sync: JournalSync = .everyCommit, standingBy: (@Sendable () -> Bool)? = nil)
            throws(JournalError)
        {
            let store = try PostgresJournalStore(url: url, sync: sync, standingBy: standingBy)
            name = store.name
            self.sync = sync
            self.store = Mutex(store)
        }

        deinit { close() }

        /// Creates an empty journal (schema version 2) in the database at `url`, in one transaction.
        ///
        /// - Throws: ``JournalError`` with code `journal-exists` if the database holds a journal already (it is never
        ///   replaced), `journal-unavailable` if PostgreSQL cannot be reached, `journal-io` if the server refuses.
        public static func create(url: String) throws(JournalError) {
            try PostgresJournalStore.create(url: url)
        }

        /// Whether `location` names a PostgreSQL journal (`postgres://` or `postgresql://`) rather than a file.
        public static func isURL(_ location: String) -> Bool { JournalLocation.isPostgres(location) }

        /// `url` without its password, for messages and logs.
        public static func redacted(_ url: String) -> String { JournalLocation.redacted(url) }

        public func recover() throws(JournalError) -> JournalState {
            try store.withLock { store throws(JournalError) in try store.recover() }
        }

        public var fingerprintSeeds: [UInt64] { store.withLock { $0.fingerprintSeeds } }

        public func commit(_ operations: [JournalOperation]) throws(JournalError) {
            try store.withLock { store throws(JournalError) in try store.commit(operations) }
        }

        /// Checks that this session still holds the leader lock; throws `journal-unavailable` if the connection or the
        /// lock is gone (the broker calls it when it has not committed for a second, to notice a lost database early).
        public func checkLeadership() throws(JournalError) {
            try store.withLock { store throws(JournalError) in try store.checkLeadership() }
        }

        /// Does nothing: PostgreSQL's WAL writer flushes asynchronous commits by itself.
        public func syncIfDue() throws(JournalError) {}

        /// Releases leadership (the advisory lock) and closes the connection (idempotent).
        public func close() {
            store.withLock { $0.close() }
        }

        /// Gives up the leader lock but keeps the connection: for tests of the fence (`@testable`), never for brokers.
        func releaseLeadershipForTesting() throws(JournalError) {
            try store.withLock { store throws(JournalError) in try store.releaseLeadership() }
        }

        public var statistics: JournalStatistics {
            store.withLock { $0.statistics }
        }
    }
#endif  // PostgreSQL
