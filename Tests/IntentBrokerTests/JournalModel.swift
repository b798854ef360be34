import IntentWire
import Testing

@testable import IntentBroker

/// What a journal holds after the shell committed the core's journal entries batch by batch: the
/// requests accepted and not ended, the stored endings, the idempotency records. Tests check against it that
/// nothing leaves the broker before it is recorded, and restart the core from it as a crashed broker would be.
struct JournalModel {
    struct OpenRequest {
        var request: BrokerRequest<[UInt8]>
        let intentType: [UInt8]
        var handleDispatched = false
        var listeners: [Listener] = []
    }

    typealias KeyRecord = IdempotencyStore<ResultStore<[UInt8]>.Result>.Record

    var open: [RequestID: OpenRequest] = [:]
    var results: [RequestKey: (result: ResultStore<[UInt8]>.Result, at: UInt64)] = [:]
    var keyRecords: [IdempotencyScope: (record: KeyRecord, endedAt: UInt64?)] = [:]
    var nextRequestID: RequestID = 1
    /// Conversations by owner and id: the document the broker last wrote.
    var conversations: [ConversationKey: [UInt8]] = [:]
    var commits = 0
    /// The keys the last commit stored an ending for (one that also expired in that commit was recorded all the
    /// same: a commit that gathered a long while may hold both).
    var endedInLastCommit: Set<RequestKey> = []

    /// One batch's transaction.
    mutating func apply(
        _ entries: [JournalEntry<[UInt8]>], changed: Set<IdempotencyScope>, core: borrowing BrokerCore<[UInt8]>,
        now: UInt64
    ) {
        if entries.isEmpty && changed.isEmpty { return }
        commits += 1
        endedInLastCommit.removeAll()
        for entry in entries {
            switch entry {
            case .accepted(let request, let type):
                open[request.id] = OpenRequest(request: request, intentType: type)
                nextRequestID = max(nextRequestID, request.id + 1)
            case .attached(let id, let listener):
                open[id]?.listeners.append(listener)
            case .detached(let id, let listener):
                open[id]?.listeners.removeAll { $0.key == listener.key }
            case .handleDispatched(let id):
                open[id]?.handleDispatched = true
            case .ended(let id, let result, let keys, let at):
                open.removeValue(forKey: id)
                for entry in keys {
                    results[entry.key] = (result, at)
                    endedInLastCommit.insert(entry.key)
                }
            case .stored(let result, let key, _, let at):
                results[key] = (result, at)
                endedInLastCommit.insert(key)
            case .resultsExpired(let before):
                results = results.filter { $0.value.at > before }
            case .conversation(let key, let document):
                conversations[key] = document
            case .conversationRemoved(let key):
                conversations.removeValue(forKey: key)
            }
        }
        for scope in changed {
            if let record = core.idempotency.records[scope] {
                var ended: UInt64?
                if case .inFlight = record.state {} else { ended = now }
                keyRecords[scope] = (record, ended)
            } else {
                keyRecords.removeValue(forKey: scope)
            }
        }
    }

    /// A JOB that goes out (the shell asked the core first) must be recorded already: its request open, a handle
    /// job's marked as dispatched.
    func checkRecorded(_ job: JobDispatch<[UInt8]>) {
        #expect(open[job.request] != nil, "a JOB for request \(job.request), not in the journal")
        if job.phase == .handle {
            #expect(open[job.request]?.handleDispatched == true, "a handle JOB not recorded as dispatched")
        }
    }

    /// Every REPLY of the batch must be recorded already: a progress REPLY's request is in the journal (open, or
    /// ended in this very batch), an ending REPLY is stored.
    func checkRecorded(_ actions: [BrokerAction<[UInt8]>]) {
        for action in actions {
            switch action {
            case .reply(let reply) where reply.command == .reply:
                let key = RequestKey(client: reply.client, id: reply.requestID)
                if reply.status == .progress {
                    let known =
                        results[key] != nil || endedInLastCommit.contains(key)
                        || open.values.contains { $0.request.key == key || $0.listeners.contains { $0.key == key } }
                    #expect(known, "a progress REPLY for a request not in the journal")
                } else if !Self.refusedBeforeAcceptance(reply) {
                    #expect(
                        results[key] != nil || endedInLastCommit.contains(key),
                        "an ending REPLY not stored in the journal")
                }
            default:
                break
            }
        }
    }

    /// Error answers that may be to REQUESTs never accepted (nothing to keep, nothing to journal; `busy` is also the
    /// ending of a request shed at its deadline, which is kept: not told apart here; `unavailable` answers requests
    /// the journal could not record).
    static func refusedBeforeAcceptance(_ reply: ClientReply<[UInt8]>) -> Bool {
        guard reply.status == .error, case .bytes(let body) = reply.payload else { return false }
        let text = String(decoding: body, as: UTF8.self)
        return [
            "busy", "duplicate-request", "unknown-intent", "shutting-down", "idempotency-conflict", "unavailable",
            "unknown-conversation", "conversation-ended", "turn-mismatch", "not-asked", "bad-option", "bad-answer",
        ]
        .contains {
            text.hasPrefix(#"{"code":""# + $0 + "\"")
        }
    }

    var recoveredRequests: [RecoveredRequest<[UInt8]>] {
        open.values.map { entry in
            let request = entry.request
            return RecoveredRequest(
                id: request.id, key: request.key, identity: request.identity, intentType: entry.intentType,
                requested: request.requested, body: request.body, bodySize: request.bodySize,
                arrival: request.arrival, deadline: request.deadline - request.arrival,
                idempotencyKey: request.idempotency?.key, attempt: request.attempt, version: request.version,
                handleDispatched: entry.handleDispatched,
                listeners: entry.listeners.map { ($0.key, $0.version, $0.actAt) })
        }
    }

    var recoveredConversations: [RecoveredConversation] {
        conversations.map { RecoveredConversation(key: $0.key, document: $0.value) }
    }

    var recoveredResults: [RecoveredResult<[UInt8]>] {
        results.map { RecoveredResult(key: $0.key, result: $0.value.result, storedAt: $0.value.at) }
    }

    var recoveredKeyRecords: [RecoveredKeyRecord<[UInt8]>] {
        keyRecords.map { scope, entry in
            var state = entry.record.state
            if case .outcomeUnknown = state { state = .outcomeUnknown(runningOn: nil) }
            return RecoveredKeyRecord(
                scope: scope, state: state, fingerprint: entry.record.fingerprint, attempts: entry.record.attempts,
                cost: max(0, entry.record.cost - scope.cost), endedAt: entry.endedAt)
        }
    }
}
