/// A stored ending (final reply or error) of one request, kept for STATUS until it expires.
public struct JournalResult: Sendable, Hashable {
    /// The request the ending answers. One result per key: storing another for the same key replaces it.
    public var key: JournalRequestKey
    /// Whether the ending is an error (its body is then the error body).
    public var isError: Bool
    /// The phase of the ending.
    public var phase: String
    /// The reply body.
    public var body: [UInt8]
    /// When it was stored: wall clock, Unix milliseconds.
    public var storedAt: Int64

    public init(key: JournalRequestKey, isError: Bool, phase: String, body: [UInt8], storedAt: Int64) {
        self.key = key
        self.isError = isError
        self.phase = phase
        self.body = body
        self.storedAt = storedAt
    }
}
