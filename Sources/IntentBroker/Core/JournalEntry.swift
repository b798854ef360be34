import IntentWire

/// What the broker core asks its shell to record in the journal (`Docs/JOURNAL.md`) before it performs
/// the batch's actions: the shell commits a batch's entries in one transaction, then sends its JOBs and REPLYs, so
/// an accepted request is durable before its first reply, a handle job before its JOB, an ending before its REPLY.
///
/// Times are the core's (monotonic nanoseconds); the shell turns them into wall-clock time.
enum JournalEntry<Body> {
    /// A request was accepted (its type's name in `intentType`). The request itself, not a copy: the journal
    /// records only what is fixed at acceptance (key, identity, requested phase, body, deadline, idempotency key,
    /// attempt, version), and the batch is committed before any JOB of it leaves, so nothing that changes later has
    /// changed by then.
    case accepted(BrokerRequest<Body>, intentType: [UInt8])
    /// A duplicate was attached to accepted request `RequestID` through its idempotency key.
    case attached(RequestID, Listener)
    /// A duplicate left accepted request `RequestID` (shed at its own deadline: its ending is stored apart).
    case detached(RequestID, Listener)
    /// The request's handle job is about to be given to a worker: after a crash it may have run.
    case handleDispatched(RequestID)
    /// The request ended with `result`, which answers each of `keys` (the request and its attached duplicates, each
    /// with its client protocol version).
    case ended(RequestID, ResultStore<Body>.Result, keys: [(key: RequestKey, version: UInt8)], at: UInt64)
    /// A result stored for STATUS without a request in the table (a replay, a duplicate shed at its deadline).
    case stored(ResultStore<Body>.Result, key: RequestKey, version: UInt8, at: UInt64)
    /// Results stored before this time have expired.
    case resultsExpired(before: UInt64)
    /// A conversation's state (its journal document, ``Conversation/journalDocument()``), new or changed.
    case conversation(ConversationKey, [UInt8])
    /// A conversation was forgotten (or never started).
    case conversationRemoved(ConversationKey)
}
