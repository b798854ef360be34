/// A conversation's state as the broker last recorded it (the broker's own JSON document, opaque to the journal).
///
/// One record per (scope, id): writing a conversation replaces the record with the same scope and id, and moves it
/// after every other record (recovery reads them in the order they were last written).
public struct JournalConversation: Sendable, Hashable {
    /// Whose conversation it is: the client's CURVE key, or its routing id without CURVE.
    public var scope: [UInt8]
    /// The conversation id (1-255 printable ASCII bytes, chosen by the client).
    public var id: [UInt8]
    /// The broker's JSON document of the conversation, stored and read back as is.
    public var state: [UInt8]
    /// When the broker wrote this state (Unix milliseconds).
    public var updatedAt: Int64

    public init(scope: [UInt8], id: [UInt8], state: [UInt8], updatedAt: Int64) {
        self.scope = scope
        self.id = id
        self.state = state
        self.updatedAt = updatedAt
    }
}
