/// Everything a journal holds, as recovery reads it.
public struct JournalState: Sendable, Hashable {
    /// The open requests, in acceptance order (by id), with their listeners.
    public var requests: [JournalRequest]
    /// The stored results, oldest stored first.
    public var results: [JournalResult]
    /// The idempotency records, in the order they were last written.
    public var keyRecords: [JournalKeyRecord]
    /// The conversations, in the order they were last written.
    public var conversations: [JournalConversation]
    /// The first request id never used: above every id ever accepted (ended ones included), at least 1.
    public var nextRequestID: UInt64

    public init(
        requests: [JournalRequest] = [], results: [JournalResult] = [], keyRecords: [JournalKeyRecord] = [],
        conversations: [JournalConversation] = [], nextRequestID: UInt64 = 1
    ) {
        self.requests = requests
        self.results = results
        self.keyRecords = keyRecords
        self.conversations = conversations
        self.nextRequestID = nextRequestID
    }
}
