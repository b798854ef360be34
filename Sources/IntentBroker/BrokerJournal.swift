import IntentJournal
import IntentWire
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The I/O shell's side of the journal (`Docs/JOURNAL.md`): it turns the core's ``JournalEntry``s and changed
/// idempotency records into ``JournalOperation``s for one transaction per batch, and on opening it reads the journal
/// back into the core. When to commit, and what a failure means, the core decides (``JournalLink``). Times cross between the core's monotonic clock and the journal's
/// wall clock (Unix milliseconds) here.
///
/// Used from the broker loop's thread only.
final class BrokerJournal {
    let journal: any Journal
    let path: String
    /// Where each request accepted in the commit being prepared is, among its operations.
    private var acceptedHere: [UInt64: Int] = [:]

    /// Opens the journal at `path` (a SQLite file, or a `postgres://` URL: several brokers may share it; the one
    /// holding its advisory lock is active). `standingBy`: see `PostgresJournal.init(url:sync:standingBy:)`.
    init(path: String, sync: JournalSync, standingBy: (@Sendable () -> Bool)? = nil) throws(JournalError) {
        self.path = path
        journal = try JournalLocation.open(path, sync: sync, standingBy: standingBy)
    }

    /// The journal's name for logs (a URL without its password).
    var name: String { JournalLocation.redacted(path) }

    /// Whether the journal is a database server that can go away and come back (PostgreSQL), rather than a file.
    var isShared: Bool { JournalLocation.isShared(journal) }

    /// Milliseconds between the Unix epoch and the monotonic clock's zero, now.
    private static func offset() -> Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let wallMilliseconds = Int64(wall.tv_sec) * 1000 + Int64(wall.tv_nsec) / 1_000_000
        return wallMilliseconds - Int64(MonotonicTime.now() / 1_000_000)
    }

    // MARK: Commit

    /// Turns a batch the core commits (``BrokerCore/nextBatch(actions:entries:)``) into the operations of one
    /// transaction; the idempotency records `changed` are read from the core as they are now.
    func operations(
        _ entries: [JournalEntry<ZMQMessage>], changed: Set<IdempotencyScope>, core: inout BrokerCore<ZMQMessage>
    ) -> [JournalOperation] {
        let offset = Self.offset()
        func wall(_ time: UInt64) -> Int64 { Int64(time / 1_000_000) + offset }
        var operations: [JournalOperation] = []
        operations.reserveCapacity(entries.count + changed.count)
        // A request accepted in this commit and given its handle job in it too (the usual case) is written once,
        // already marked dispatched: one row write fewer per handle request.
        acceptedHere.removeAll(keepingCapacity: true)
        for entry in entries {
            switch entry {
            case .accepted(let request, let type):
                acceptedHere[request.id] = operations.count
                operations.append(
                    .accepted(
                        JournalRequest(
                            id: request.id, client: request.key.client, requestID: request.key.id,
                            identity: request.identity, intentType: type, phase: request.requested.description,
                            body: request.body.bytes,
                            deadlineMilliseconds: Int((request.deadline - request.arrival) / 1_000_000),
                            acceptedAt: wall(request.arrival), idempotencyKey: request.idempotency?.key,
                            attempt: request.attempt, version: request.version, handleDispatched: false,
                            listeners: [])))
            case .attached(let id, let listener):
                operations.append(.attached(request: id, Self.key(listener, wall(listener.actAt))))
            case .detached(let id, let listener):
                operations.append(.detached(request: id, Self.key(listener, wall(listener.actAt))))
            case .handleDispatched(let id):
                if let index = acceptedHere[id], case .accepted(var request) = operations[index] {
                    request.handleDispatched = true
                    operations[index] = .accepted(request)
                } else {
                    operations.append(.handleDispatched(request: id))
                }
            case .ended(let id, let result, let keys, let at):
                let body = Self.bytes(result.payload)
                operations.append(
                    .ended(
                        request: id,
                        results: keys.map {
                            JournalResult(
                                key: JournalRequestKey(
                                    client: $0.key.client, requestID: $0.key.id, version: $0.version),
                                isError: result.isError, phase: result.phase.description, body: body,
                                storedAt: wall(at))
                        }))
            case .stored(let result, let key, let version, let at):
                operations.append(
                    .stored([
                        JournalResult(
                            key: JournalRequestKey(client: key.client, requestID: key.id, version: version),
                            isError: result.isError, phase: result.phase.description, body: Self.bytes(result.payload),
                            storedAt: wall(at))
                    ]))
            case .resultsExpired(let before):
                operations.append(.resultsExpired(storedBefore: wall(before)))
            case .conversation(let key, let document):
                operations.append(
                    .conversation(
                        JournalConversation(
                            scope: key.scope, id: key.id, state: document,
                            updatedAt: offset + Int64(MonotonicTime.now() / 1_000_000))))
            case .conversationRemoved(let key):
                operations.append(.conversationRemoved(scope: key.scope, id: key.id))
            }
        }
        for scope in changed {
            guard let record = core.idempotency.records[scope] else {
                operations.append(.keyRemoved(identity: scope.identity, intentType: scope.intentType, key: scope.key))
                continue
            }
            var state: JournalKeyRecord.State
            var endedAt: Int64?
            switch record.state {
            case .inFlight(let id):
                state = .inFlight(request: id)
            case .completed(let reply):
                state = .completed(
                    isError: reply.isError, phase: reply.phase.description, body: Self.bytes(reply.payload))
                endedAt = offset + Int64(MonotonicTime.now() / 1_000_000)
            case .outcomeUnknown:
                state = .outcomeUnknown
                endedAt = offset + Int64(MonotonicTime.now() / 1_000_000)
            }
            operations.append(
                .keyRecord(
                    JournalKeyRecord(
                        identity: scope.identity, intentType: scope.intentType, key: scope.key,
                        fingerprint: Self.bytes(record.fingerprint), attempts: record.attempts, state: state,
                        endedAt: endedAt)))
        }
        return operations
    }

    /// Forces commits to disk when the interval policy is due (the loop calls it on its timer).
    func syncIfDue() throws(JournalError) { try journal.syncIfDue() }

    /// Checks that the journal can still be written (PostgreSQL: connection and leader lock).
    func checkLeadership() throws(JournalError) { try journal.checkLeadership() }

    // MARK: Recovery

    /// Reads the journal back into a fresh core (before any socket is open); returns what it read, for the log.
    func recover(into core: inout BrokerCore<ZMQMessage>) throws(JournalError) -> JournalState {
        let state = try journal.recover()
        let seeds = journal.fingerprintSeeds
        if seeds.count == 2 { core.fingerprintSeeds = BodyFingerprint.Seeds(first: seeds[0], second: seeds[1]) }
        let now = MonotonicTime.now()
        let offset = Self.offset()
        func monotonic(_ wall: Int64) -> UInt64 {
            let milliseconds = wall - offset
            return milliseconds > 0 ? UInt64(milliseconds) * 1_000_000 : 1
        }
        var requests: [RecoveredRequest<ZMQMessage>] = []
        for request in state.requests {
            let body: ZMQMessage
            do throws(ZMQError) {
                body = try ZMQMessage.copying(request.body)
            } catch {
                throw JournalError(code: .io, message: "\(name): cannot hold a request body: \(error)")
            }
            let arrival = monotonic(request.acceptedAt)
            let deadline = UInt64(max(0, request.deadlineMilliseconds)) * 1_000_000
            requests.append(
                RecoveredRequest(
                    id: request.id, key: RequestKey(client: request.client, id: request.requestID),
                    identity: request.identity, intentType: request.intentType,
                    requested: RequestPhase(rawValue: request.phase) ?? .lifecycle, body: body,
                    bodySize: request.body.count, arrival: arrival, deadline: deadline,
                    idempotencyKey: request.idempotencyKey, attempt: request.attempt, version: request.version,
                    handleDispatched: request.handleDispatched,
                    // A duplicate's own deadline (one journaled without it gets the request's); one that passed
                    // meanwhile gets no second progress.
                    listeners: request.listeners.map {
                        (
                            RequestKey(client: $0.client, id: $0.requestID), $0.version,
                            $0.actAt.map(monotonic) ?? arrival + deadline
                        )
                    }))
        }
        let results = state.results.map {
            RecoveredResult<ZMQMessage>(
                key: RequestKey(client: $0.key.client, id: $0.key.requestID),
                result: .init(isError: $0.isError, phase: Self.phase($0.phase), payload: .bytes($0.body)),
                storedAt: monotonic($0.storedAt))
        }
        var keyRecords: [RecoveredKeyRecord<ZMQMessage>] = []
        for record in state.keyRecords {
            let scope = IdempotencyScope(identity: record.identity, intentType: record.intentType, key: record.key)
            let kept: IdempotencyStore<ResultStore<ZMQMessage>.Result>.State
            var cost = 0
            switch record.state {
            case .inFlight(let id): kept = .inFlight(id)
            case .outcomeUnknown: kept = .outcomeUnknown(runningOn: nil)
            case .completed(let isError, let phase, let body):
                kept = .completed(.init(isError: isError, phase: Self.phase(phase), payload: .bytes(body)))
                cost = body.count
            }
            keyRecords.append(
                RecoveredKeyRecord(
                    scope: scope, state: kept, fingerprint: Self.fingerprint(record.fingerprint),
                    attempts: record.attempts, cost: cost, endedAt: record.endedAt.map(monotonic)))
        }
        core.restore(
            requests: requests, results: results, keyRecords: keyRecords,
            conversations: state.conversations.map {
                RecoveredConversation(key: ConversationKey(scope: $0.scope, id: $0.id), document: $0.state)
            },
            nextRequestID: state.nextRequestID, now: now)
        return state
    }

    func close() { journal.close() }

    // MARK: Conversions

    /// A duplicate attached to a request, as the journal names it (with when its deadline is acted on).
    private static func key(_ listener: Listener, _ actAt: Int64) -> JournalRequestKey {
        JournalRequestKey(
            client: listener.key.client, requestID: listener.key.id, version: listener.version, actAt: actAt)
    }

    private static func bytes(_ payload: ReplyPayload<ZMQMessage>) -> [UInt8] {
        switch payload {
        case .bytes(let bytes): bytes
        case .body(let message): message.bytes
        }
    }

    private static func bytes(_ fingerprint: BodyFingerprint) -> [UInt8] {
        withUnsafeBytes(of: fingerprint.high.littleEndian) { Array($0) }
            + withUnsafeBytes(of: fingerprint.low.littleEndian) { Array($0) }
    }

    private static func fingerprint(_ bytes: [UInt8]) -> BodyFingerprint {
        guard bytes.count == 16 else { return BodyFingerprint(high: 0, low: 0) }
        func word(_ start: Int) -> UInt64 {
            bytes[start..<start + 8].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        return BodyFingerprint(high: word(0), low: word(8))
    }

    /// The wire word of a stored phase (the reply's F4).
    private static func phase(_ text: String) -> StaticString {
        switch text {
        case "resolve": "resolve"
        case "confirm": "confirm"
        case "handle": "handle"
        case "lifecycle": "lifecycle"
        default: ""
        }
    }
}
