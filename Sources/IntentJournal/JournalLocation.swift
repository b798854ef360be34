import Foundation

/// Where a journal lives: a SQLite file, or a PostgreSQL database named by a `postgres://` URL, and what this build
/// can open. The PostgreSQL journal is built only with the package trait `PostgreSQL` (README, "Build options"):
/// without it, a `postgres://` location is refused with `journal-not-built` and the SQLite journal works as before.
public enum JournalLocation {
    /// Whether this build has the PostgreSQL journal (the package trait `PostgreSQL`).
    #if PostgreSQL
        public static let postgresIsBuilt = true
    #else
        public static let postgresIsBuilt = false
    #endif

    /// Whether `location` names a PostgreSQL journal (`postgres://` or `postgresql://`) rather than a file.
    public static func isPostgres(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// `location` for messages and logs: a URL without its password, a path as it is.
    public static func redacted(_ location: String) -> String {
        guard isPostgres(location) else { return location }
        guard var components = URLComponents(string: location) else { return "the PostgreSQL URL" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "the PostgreSQL URL"
    }

    /// Opens the journal at `location`: ``SQLiteJournal`` for a path, `PostgresJournal` for a URL (`standingBy`:
    /// see its initializer).
    ///
    /// - Throws: ``JournalError`` as the journal's initializer does, and `journal-not-built` for a URL in a build
    ///   without the `PostgreSQL` trait.
    public static func open(
        _ location: String, sync: JournalSync, standingBy: (@Sendable () -> Bool)? = nil
    ) throws(JournalError) -> any Journal {
        guard isPostgres(location) else { return try SQLiteJournal(path: location, sync: sync) }
        #if PostgreSQL
            return try PostgresJournal(url: location, sync: sync, standingBy: standingBy)
        #else
            throw notBuilt(location)
        #endif
    }

    /// Creates an empty journal at `location` (schema version 2); an existing one is never replaced.
    ///
    /// - Throws: ``JournalError`` as ``SQLiteJournal/create(path:)`` and `PostgresJournal.create(url:)` do, and
    ///   `journal-not-built` for a URL in a build without the `PostgreSQL` trait.
    public static func create(_ location: String) throws(JournalError) {
        guard isPostgres(location) else { return try SQLiteJournal.create(path: location) }
        #if PostgreSQL
            try PostgresJournal.create(url: location)
        #else
            throw notBuilt(location)
        #endif
    }

    /// Whether `journal` is a database server that can go away and come back (PostgreSQL), rather than a file.
    public static func isShared(_ journal: any Journal) -> Bool {
        #if PostgreSQL
            journal is PostgresJournal
        #else
            false
        #endif
    }

    static func notBuilt(_ location: String) -> JournalError {
        JournalError(
            code: .notBuilt,
            message: "\(redacted(location)): this build has no PostgreSQL journal; build it with the PostgreSQL trait "
                + "(swift build --traits PostgreSQL, or Scripts/build-release --traits Full; README, \"Build options\")"
        )
    }
}
