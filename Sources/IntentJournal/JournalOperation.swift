/// One change to a journal. The broker queues operations while it handles a batch of messages and commits them,
/// in one transaction, before it performs the batch's actions.
public enum JournalOperation: Sendable, Hashable {
    /// A request was accepted (its id must be new).
    case accepted(JournalRequest)
    /// A duplicate, named by its key, attached to an open request.
    case attached(request: UInt64, JournalRequestKey)
    /// A duplicate left the open request it was attached to (it ended on its own: shed at its deadline); nothing
    /// happens if it is not attached.
    case detached(request: UInt64, JournalRequestKey)
    /// The open request's handle job went out.
    case handleDispatched(request: UInt64)
    /// The open request ended: it is removed (with its listeners), and one result is stored per key it answers.
    case ended(request: UInt64, results: [JournalResult])
    /// Results stored without an open request (a replay of a completed key, a listener shed on its own).
    case stored([JournalResult])
    /// An idempotency record, inserted or replacing the one with the same identity, intent type and key.
    case keyRecord(JournalKeyRecord)
    /// An idempotency record removed (nothing happens if there is none).
    case keyRemoved(identity: [UInt8], intentType: [UInt8], key: [UInt8])
    /// Every result stored before this time (Unix milliseconds, exclusive) is removed.
    case resultsExpired(storedBefore: Int64)
    /// Every idempotency record that ended before this time (Unix milliseconds, exclusive) is removed; records in
    /// flight stay.
    case keyRecordsExpired(endedBefore: Int64)
    /// A conversation's state, inserted or replacing the one with the same scope and id (and then last in the order
    /// of writing).
    case conversation(JournalConversation)
    /// A conversation removed (nothing happens if there is none).
    case conversationRemoved(scope: [UInt8], id: [UInt8])
}
