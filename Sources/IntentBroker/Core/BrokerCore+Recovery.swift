import IntentWire
import Logging

/// A request read back from the journal, accepted by an earlier run of the broker and not ended
/// (`Docs/JOURNAL.md`). Times are the core's monotonic nanoseconds (the shell converts the journal's wall-clock
/// times; `arrival` is usually in the past).
struct RecoveredRequest<Body> {
    let id: RequestID
    let key: RequestKey
    let identity: [UInt8]
    let intentType: [UInt8]
    let requested: RequestPhase
    let body: Body
    let bodySize: Int
    let arrival: UInt64
    /// The request's deadline, relative to its arrival.
    let deadline: UInt64
    let idempotencyKey: [UInt8]?
    let attempt: Int
    let version: UInt8
    /// Its handle job was given to a worker of the earlier run: it may have run.
    let handleDispatched: Bool
    /// Duplicates attached to it through its key, each with the time its own deadline is acted on.
    let listeners: [(key: RequestKey, version: UInt8, actAt: UInt64)]
}

/// A conversation read back from the journal: its owner and id, and the document the broker wrote
/// (``Conversation/journalDocument()``).
struct RecoveredConversation {
    let key: ConversationKey
    let document: [UInt8]
}

/// A stored ending read back from the journal, for STATUS.
struct RecoveredResult<Body> {
    let key: RequestKey
    let result: ResultStore<Body>.Result
    let storedAt: UInt64
}

/// An idempotency record read back from the journal.
struct RecoveredKeyRecord<Body> {
    let scope: IdempotencyScope
    let state: IdempotencyStore<ResultStore<Body>.Result>.State
    let fingerprint: BodyFingerprint
    let attempts: Int
    /// What its stored reply costs to keep (ended records).
    let cost: Int
    let endedAt: UInt64?
}

extension BrokerCore {
    /// Puts back what an earlier run of the broker left in the journal, before any socket is open: stored endings
    /// (for STATUS, with the time they have left), idempotency records, and the requests it accepted and did not end.
    ///
    /// Those requests go back in their queues in acceptance order, each from its first job (a lifecycle from resolve:
    /// resolve and confirm are side-effect free), with the deadline and hard limit of their original arrival and no
    /// second progress reply once their deadline has passed; they are never shed by rule 2 (they were accepted). A
    /// request whose handle job had been given to a worker ends with `outcome-unknown` (with a key, its next attempt
    /// may run at once: no worker of the earlier run runs anything for this one). Their types count as served for the
    /// startup grace period, while the workers register again.
    mutating func restore(
        requests recovered: [RecoveredRequest<Body>], results stored: [RecoveredResult<Body>],
        keyRecords: [RecoveredKeyRecord<Body>], conversations recoveredConversations: [RecoveredConversation] = [],
        nextRequestID next: RequestID, now: UInt64
    ) {
        // What is read back is in the journal already; what recovery changes (requests ending `outcome-unknown`,
        // their keys) is journaled like any other change.
        let tracking = idempotency.tracksChanges
        idempotency.tracksChanges = false
        for entry in stored.sorted(by: { $0.storedAt < $1.storedAt }) {
            results.store(entry.result, for: entry.key, now: entry.storedAt)
        }
        results.expire(now: now)
        let open = Set(recovered.map(\.id))
        for record in keyRecords.sorted(by: { ($0.endedAt ?? 0) < ($1.endedAt ?? 0) }) {
            var state = record.state
            if case .inFlight(let request) = state, !open.contains(request) {
                // Its request is not in flight any more (a journal written by a broker that died between the two):
                // nothing runs it, so its outcome is unknown.
                state = .outcomeUnknown(runningOn: nil)
            }
            idempotency.restore(
                record.scope, state: state, fingerprint: record.fingerprint, attempts: record.attempts,
                cost: record.cost, endedAt: record.endedAt ?? now)
        }
        idempotency.expire(now: now)
        idempotency.tracksChanges = tracking
        nextRequestID = max(nextRequestID, next, (recovered.map(\.id).max() ?? 0) &+ 1)
        var turns: [RequestKey: ConversationKey] = [:]
        for entry in recoveredConversations {
            guard let conversation = Conversation(journalDocument: entry.document, key: entry.key, now: now) else {
                logger.warning(
                    "dropped a conversation the journal holds but this broker cannot read",
                    metadata: ["conversation": "\(entry.key.name)"])
                continue
            }
            conversations.store(conversation)
            if conversation.state == .running, let key = conversation.recoveredTurnKey { turns[key] = entry.key }
        }
        for entry in recovered.sorted(by: { $0.id < $1.id }) {
            restore(entry, turn: turns.removeValue(forKey: entry.key), now: now)
        }
        // A turn in flight whose request the journal does not hold (a journal written by a broker that died
        // between the two): nothing runs it, so the conversation is as it was before it.
        for key in turns.values {
            guard var conversation = conversations[key] else { continue }
            conversation.recoveredTurnKey = nil
            if conversation.lastReply == nil {
                conversations.remove(key)
            } else {
                conversation.turn -= 1
                conversation.state = conversation.stateBeforeTurn
                conversations.store(conversation)
            }
            journalConversation(key)
        }
    }

    private mutating func restore(_ entry: RecoveredRequest<Body>, turn: ConversationKey?, now: UInt64) {
        let type = intern(entry.intentType)
        if intentTypes[type].workers.isEmpty {
            intentTypes[type].servedUntil = max(intentTypes[type].servedUntil ?? 0, startupGraceEnd)
        }
        let actAt = entry.arrival + entry.deadline - replyMargin(entry.deadline)
        let request = BrokerRequest(
            id: entry.id, key: entry.key, intentType: type, requested: entry.requested,
            phase: entry.requested.firstJob, body: entry.body, arrival: entry.arrival,
            deadline: entry.arrival + entry.deadline, state: .queued(ticket: 0))
        request.bodySize = entry.bodySize
        request.version = entry.version
        request.identity = entry.identity
        request.attempt = entry.attempt
        request.started = true  // accepted by the earlier run: never shed as if it had just arrived
        request.firstReplySent = now >= actAt
        request.handleSent = entry.handleDispatched
        if let turn, var conversation = conversations[turn] {
            // The conversation's turn in flight: its ending goes to the conversation as before the restart.
            request.conversation = turn
            request.stopsAtReadyConfirm = conversation.flags.contains(.confirm)
            conversation.running = (entry.id, entry.key)
            conversation.recoveredTurnKey = nil
            conversations.store(conversation)
        }
        if let key = entry.idempotencyKey, entry.requested == .handle || entry.requested == .lifecycle {
            request.idempotency = IdempotencyScope(identity: entry.identity, intentType: entry.intentType, key: key)
        }
        request.listeners = entry.listeners.map {
            Listener(key: $0.key, version: $0.version, actAt: $0.actAt, progressSent: now >= $0.actAt)
        }
        requests[entry.id] = request
        requestIDs[entry.key] = entry.id
        for listener in entry.listeners { requestIDs[listener.key] = entry.id }
        if !entry.identity.isEmpty {
            for key in [entry.key] + entry.listeners.map(\.key) {
                identityRequestIDs[RequestKey(client: entry.identity, id: key.id)] = entry.id
            }
        }
        statistics.requestsRecovered += 1
        enqueue(entry.id, atFront: false, now: now)
        if entry.handleDispatched {
            // Its ending names the phase the broker last heard of: handle, whose job went out (section 5.15).
            request.phase = .handle
            fail(
                entry.id, .outcomeUnknown,
                "the broker restarted while the handle job ran; whether it ran is unknown", now: now)
            return
        }
        setTimer(.deadline, at: max(now, actAt), for: entry.id)
        for listener in entry.listeners where now < listener.actAt {
            setTimer(.listenerDeadline, at: listener.actAt, for: entry.id)
        }
    }
}
