/// What `concierge journal check` reports of a journal.
public struct JournalSummary: Sendable, Hashable {
    /// The schema version.
    public var schemaVersion: Int
    /// Requests accepted and not ended.
    public var openRequests: Int
    /// Open requests whose handle job went out (after a crash, their outcome is unknown).
    public var handleDispatched: Int
    /// Duplicates attached to open requests.
    public var listeners: Int
    /// Stored results (for STATUS).
    public var results: Int
    /// Idempotency records.
    public var keyRecords: Int
    /// Conversation records (0 in a journal of schema version 1, which has none).
    public var conversations: Int
    /// The next request id.
    public var nextRequestID: UInt64
    /// The size of the database file in bytes (without its -wal file).
    public var fileBytes: Int64

    public init(
        schemaVersion: Int, openRequests: Int, handleDispatched: Int, listeners: Int, results: Int, keyRecords: Int,
        conversations: Int = 0, nextRequestID: UInt64, fileBytes: Int64
    ) {
        self.schemaVersion = schemaVersion
        self.openRequests = openRequests
        self.handleDispatched = handleDispatched
        self.listeners = listeners
        self.results = results
        self.keyRecords = keyRecords
        self.conversations = conversations
        self.nextRequestID = nextRequestID
        self.fileBytes = fileBytes
    }
}
