/// Why a journal could not be created, opened, read or written.
///
/// The ``code`` is stable (the broker, scripts and tests match on it); the ``message`` names the file and says what
/// to do.
public struct JournalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case missing = "journal-missing"
            case unreadable = "journal-unreadable"
            case newerVersion = "journal-newer-version"
            case corrupt = "journal-corrupt"
            case io = "journal-io"
            case unavailable = "journal-unavailable"
            case locked = "journal-locked"
            case exists = "journal-exists"
            case invalidOperation = "journal-invalid-operation"
            case notBuilt = "journal-not-built"
        }
        private let value: Value

        /// The journal does not exist (a broker never creates one: `concierge journal init PATH` does).
        public static let missing = Code(value: .missing)
        /// The journal exists but cannot be opened for reading and writing (permissions, a directory).
        public static let unreadable = Code(value: .unreadable)
        /// The journal was written by a newer Concierge (its schema version is above the one this build knows).
        public static let newerVersion = Code(value: .newerVersion)
        /// The file is not a Concierge journal, or it is damaged (not SQLite, truncated, torn, failed integrity check).
        public static let corrupt = Code(value: .corrupt)
        /// Reading or writing failed (disk full, an I/O error, a failed fsync).
        public static let io = Code(value: .io)
        /// The journal's server cannot be reached (PostgreSQL).
        public static let unavailable = Code(value: .unavailable)
        /// Another process (or another journal object in this one) has the journal open: two brokers never share
        /// one journal.
        public static let locked = Code(value: .locked)
        /// `create` was asked for a journal (or backup) that exists already: existing files are never replaced.
        public static let exists = Code(value: .exists)
        /// A commit holds an operation that contradicts the journal (e.g. a request id accepted twice, an ending for
        /// a request that is not open): a bug in the caller. Nothing of that commit is written.
        public static let invalidOperation = Code(value: .invalidOperation)
        /// The journal is a PostgreSQL URL and this build has no PostgreSQL journal (the package trait `PostgreSQL`).
        public static let notBuilt = Code(value: .notBuilt)

        public var description: String { value.rawValue }
    }

    /// What went wrong, stable.
    public let code: Code
    /// A human-readable explanation naming the file and what to do.
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
