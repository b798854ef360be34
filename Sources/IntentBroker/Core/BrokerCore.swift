import IntentJournal
import IntentWire
import Logging

/// The broker's rules, without sockets: a state machine that turns events (a request, a STATUS, a worker's READY,
/// RESULT, DRAIN or DISCONNECT, a worker gone silent, a timer, shutdown) into ``BrokerAction``s (send a job, send a
/// reply, a control message to a worker).
///
/// Every routing rule of `Schemas/PROTOCOL.md` section 6 lives here, in this file and its extensions:
/// acceptance and shedding (`+Requests`), workers and lost jobs (`+Workers`), dispatching and queueing
/// (`+Dispatch`), deadlines, the hard limit, heartbeats and shutdown (`+Time`). The I/O shell (``BrokerLoop``)
/// decodes frames, calls one method per event, and performs the actions the core queued, in order, in batches.
///
/// Time is passed in (`now`, monotonic nanoseconds) and never read here, so tests drive the core step by step.
/// Generic over the body type: the shell uses libzmq messages (bodies are moved, never copied), tests use bytes.
///
/// Not copyable: there is one core, and reading it (a getter, from the shell's stored property) borrows it in place.
/// A copy would retain every table it holds, on every turn of the loop; the compiler now refuses to make one.
struct BrokerCore<Body>: ~Copyable {
    /// The configuration, with its durations in nanoseconds: one value, stored once.
    let settings: CoreSettings
    let logger: Logger

    var configuration: BrokerConfiguration { settings.configuration }
    /// Whether the broker keeps a journal (``JournalEntry``s are queued for the shell to record).
    var journaling: Bool { settings.journaling }

    // MARK: State
    /// Accepted requests not yet ended, by the broker's id.
    var requests: [SerialKey: BrokerRequest<Body>] = [:]
    /// The same requests by (client, request id): duplicates and STATUS.
    var requestIDs: [RequestKey: RequestID] = [:]
    /// With CURVE, the same requests by (the client's CURVE public key, request id): a CANCEL from a client that
    /// reconnected with another routing id finds them (section 4.10.2).
    var identityRequestIDs: [RequestKey: RequestID] = [:]
    /// Registered workers.
    var workers: [SerialKey: WorkerRecord] = [:]
    /// The same workers by routing id.
    var workerIDs: [ByteKey: WorkerID] = [:]
    /// One state per intent type ever announced, and the index of each name.
    var intentTypes: [IntentTypeState] = []
    var intentTypeIndex: [ByteKey: Int] = [:]
    /// Requests waiting in all intent types' queues together (always the sum of the queues' counts).
    private(set) var queuedCount = 0
    var timers = TimerQueue()
    var results: ResultStore<Body>
    /// The conversations the broker carries between turns (section 4.11).
    var conversations: ConversationStore
    /// Records of idempotency keys (`Docs/IDEMPOTENCY.md`).
    var idempotency: IdempotencyStore<ResultStore<Body>.Result>
    /// The keys of body fingerprints: this process's, or the journal's (records read back from it must compare
    /// equal to the fingerprints of retries).
    var fingerprintSeeds = BodyFingerprint.processSeeds
    /// Jobs of attempts that ended without a known outcome while their worker may still run them, by job id.
    var unknownAttempts: [UInt64: IdempotencyScope] = [:]
    /// Jobs booked on a worker that run several lifecycle phases (section 5.15), by job id; an entry goes when the
    /// job leaves its worker's job table.
    var chainedJobs: [SerialKey: ChainedJob] = [:]
    var statistics = BrokerStatistics()
    /// The workers refused most recently (section 5.18, STATS `refused`), oldest first, at most
    /// ``maxRecentRefusals``.
    var recentRefusals: [BrokerStats.Refusal] = []
    /// The permissions in force (`Docs/PERMISSIONS.md`); nil: every admitted key may do everything.
    var permissions: PermissionsGate?
    /// With permissions: the key each client routing id is bound to (``ClientBinding``), swept at
    /// ``nextBindingSweep``.
    var clientBindings: [ByteKey: ClientBinding] = [:]
    var nextBindingSweep: UInt64 = 0
    /// Counters and histograms for operators, when ``BrokerConfiguration/metricsFactory`` is set.
    let metrics: BrokerMetrics?
    var nextRequestID: RequestID = 1
    var nextWorkerID: WorkerID = 1
    var nextJobID: UInt64 = 1
    var nextTicket: UInt64 = 1
    var nextTimerSequence: UInt64 = 0
    var nextHeartbeat: UInt64
    var nextPaceUpdate: UInt64
    /// Until when intent types no worker announced yet count as served (the startup grace period).
    let startupGraceEnd: UInt64
    /// Warnings caused by one peer, limited per peer and kind.
    var warnings: WarningLimiter
    /// Set once shutdown begins: when in-flight requests must have ended.
    var shutdownDeadline: UInt64?

    /// What the shell must do, in order.
    var actions: [BrokerAction<Body>] = []
    /// With an audit log: the records made since the shell last took them.
    var auditRecords: [AuditRecord] = []
    /// The link to the journal: whether actions wait for a commit, and whether the journal can be reached.
    var journalLink: JournalLink<Body>
    /// With a journal: what the shell must record before it performs ``actions`` (see ``JournalEntry``).
    var journal: [JournalEntry<Body>] = []
    /// Gives a request's body an allocation of its own when it starts to wait in a queue behind
    /// ``uncompactedQueueLimit`` others (the shell's libzmq frames would otherwise keep the receive buffer they were
    /// cut from for as long as the request waits).
    var compactQueuedBody: ((Body) -> Body)?

    /// How many queued requests may keep their bodies as received. A body that waits behind fewer requests than this
    /// is not copied: it is likely to leave soon, and when clients keep more requests in flight than the workers have
    /// slots every request waits a moment, so the copy (two allocations and the bytes) was made for nearly every
    /// request. A body kept as received holds its receive buffer (about 18 KiB at worst), so these cost at most
    /// 2.3 MiB.
    ///
    /// The bound holds whatever order the queue takes requests in: the other uncompacted requests still queued were
    /// all queued when the newest one arrived, and it found fewer than this many requests ahead of it.
    static var uncompactedQueueLimit: Int { 128 }

    init(configuration: BrokerConfiguration, logger: Logger, now: UInt64, journaling: Bool = false)
        throws(BrokerError)
    {
        try configuration.validate()
        self.init(validated: configuration, logger: logger, now: now, journaling: journaling)
    }

    /// A core for a configuration that passed ``BrokerConfiguration/validate()``.
    init(validated configuration: BrokerConfiguration, logger: Logger, now: UInt64, journaling: Bool) {
        settings = CoreSettings(configuration, journaling: journaling)
        self.logger = logger
        journalLink = JournalLink(
            state: journaling ? .idle : .none,
            isShared: journaling && configuration.journalPath.map(JournalLocation.isPostgres) == true, lastContact: now)
        results = ResultStore(
            ttl: configuration.resultTTL.nanoseconds, capacity: configuration.maxStoredResults,
            byteBudget: configuration.resultsMemory)
        conversations = ConversationStore(
            ttl: configuration.conversationTTL.nanoseconds, endedTTL: configuration.resultTTL.nanoseconds,
            capacity: configuration.maxConversations, byteBudget: configuration.conversationsMemory)
        idempotency = IdempotencyStore(
            ttl: configuration.idempotencyTTL.nanoseconds, capacity: configuration.maxIdempotencyRecords,
            byteBudget: configuration.idempotencyMemory)
        nextHeartbeat = now + settings.heartbeat
        nextPaceUpdate = now + Self.paceWindow
        startupGraceEnd = now &+ configuration.startupGracePeriod.nanoseconds
        warnings = WarningLimiter(interval: configuration.peerWarningInterval.nanoseconds)
        idempotency.tracksChanges = journaling
        metrics = configuration.metricsFactory.map { BrokerMetrics(factory: $0) }
        permissions = configuration.permissions.map(PermissionsGate.init)
    }

    /// Logs a warning caused by `peer`, at most once per interval per peer and kind (see ``WarningLimiter``).
    mutating func warn(
        _ kind: WarningLimiter.Kind, peer: [UInt8], _ message: Logger.Message, _ metadata: Logger.Metadata,
        now: UInt64
    ) {
        guard let suppressed = warnings.allow(kind, peer: peer, now: now) else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["not-logged-before"] = "\(suppressed)" }
        logger.warning(message, metadata: metadata)
    }

    /// How often each type's pace is updated.
    static var paceWindow: UInt64 { 100_000_000 }

    var isShuttingDown: Bool { shutdownDeadline != nil }

    /// Takes the journal entries queued so far, and the idempotency records changed meanwhile (the shell records both
    /// in one transaction, before it performs the actions).
    mutating func takeJournal(into buffer: inout [JournalEntry<Body>]) -> Set<IdempotencyScope> {
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &journal)
        return idempotency.takeChanges()
    }

    /// Takes the actions queued so far (the shell performs them in order; performing one may queue more).
    mutating func takeActions(into buffer: inout [BrokerAction<Body>]) {
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &actions)
    }

    /// When the core next needs ``tick(now:)``: the earliest timer, heartbeat, pace update or shutdown deadline, or
    /// what the journal link waits for (``journalDue(now:stopping:)``).
    var nextWakeTime: UInt64 {
        var time = min(nextHeartbeat, nextPaceUpdate)
        if let timer = timers.min, timer.time < time { time = timer.time }
        if let shutdownDeadline, shutdownDeadline < time { time = shutdownDeadline }
        return min(time, journalLink.wakeTime)
    }

    /// A tenth of `duration`, at most the configured margin: the broker acts that much early so that its answer
    /// arrives in time (section 6.3).
    func replyMargin(_ duration: UInt64) -> UInt64 { min(duration / 10, settings.maxReplyMargin) }

    // MARK: Queue bookkeeping (the only places that change queue membership and queuedCount)

    /// Puts a request in its type's queue.
    mutating func enqueue(_ id: RequestID, atFront: Bool, now: UInt64) {
        guard let request = requests[id] else { return }
        let ticket = nextTicket
        nextTicket &+= 1
        request.state = .queued(ticket: ticket)
        if !atFront, queuedCount >= Self.uncompactedQueueLimit, let compactQueuedBody {
            request.body = compactQueuedBody(request.body)
        }
        if intentTypes[request.intentType].queue.isEmpty { intentTypes[request.intentType].queueBusySince = now }
        intentTypes[request.intentType].queue.enqueue(
            id, client: request.queueClient, ticket: ticket, arrival: request.arrival, atFront: atFront)
        intentTypes[request.intentType].pace.markSaturated(now: now)
        queuedCount += 1
    }

    /// Takes the request at the head of `type`'s queue. Its state still says `.queued`: the caller must give it a
    /// new one at once (book it on a worker).
    mutating func dequeue(_ type: Int) -> RequestID? {
        guard let head = intentTypes[type].queue.popFirst() else { return nil }
        queuedCount -= 1
        return head.request
    }

    /// Removes a queued request from its queue wherever it is (no-op for a running one).
    mutating func leaveQueue(_ request: BrokerRequest<Body>) {
        guard case .queued(let ticket) = request.state else { return }
        if intentTypes[request.intentType].queue.remove(ticket: ticket, client: request.queueClient) {
            queuedCount -= 1
        }
    }

    // MARK: Ending requests

    /// Ends a request with its final or error reply: the one place a request leaves the table.
    ///
    /// `outcome` names the ending in metrics: `final`, the code of an error the broker wrote, or the outcome word of a
    /// worker's error (``metricsOutcome(_:)``).
    mutating func end(
        _ id: RequestID, status: ClientReply<Body>.Status, payload: ReplyPayload<Body>, outcome: String, now: UInt64
    ) {
        guard let request = requests.removeValue(forKey: id) else { return }
        if settings.tracing {
            actions.append(.trace(.ended(id, outcome: outcome, lateFinal: request.firstReplySent)))
        }
        var status = status
        var payload = payload
        if request.conversation != nil {
            (status, payload) = conversationTurnEnded(request, status: status, payload: payload, now: now)
        }
        if let metrics {
            let intent = metricsLabel(ofType: request.intentType)
            metrics.requestEnded(
                intent: intent, phase: request.phase.name.description, outcome: outcome,
                finalNanoseconds: now &- request.arrival, firstReply: !request.firstReplySent)
            for _ in request.listeners {
                metrics.requestEnded(
                    intent: intent, phase: request.phase.name.description, outcome: outcome, finalNanoseconds: nil,
                    firstReply: false)
            }
        }
        leaveQueue(request)
        let result = ResultStore<Body>.Result(isError: status == .error, phase: request.phase.name, payload: payload)
        if journaling {
            let keys = [(request.key, request.version)] + request.listeners.map { ($0.key, $0.version) }
            journal.append(.ended(id, result, keys: keys, at: now))
        }
        if settings.auditing {
            for key in [request.key] + request.listeners.map(\.key) {
                audit(
                    .ended, key: key, identity: request.identity, intentType: intentTypes[request.intentType].name,
                    phase: request.requested, outcome: outcome, now: now)
            }
        }
        // The request, then the duplicates attached to it through its idempotency key: the same reply each.
        sendEnding(result, status: status, to: request.key, version: request.version, now: now)
        for listener in request.listeners {
            sendEnding(result, status: status, to: listener.key, version: listener.version, now: now)
        }
        if !request.identity.isEmpty {
            for key in [request.key] + request.listeners.map(\.key) {
                let byIdentity = RequestKey(client: request.identity, id: key.id)
                if identityRequestIDs[byIdentity] == id { identityRequestIDs.removeValue(forKey: byIdentity) }
            }
        }
        if let scope = request.idempotency { recordOutcome(of: request, scope, result: result, now: now) }
    }

    mutating func sendEnding(
        _ result: ResultStore<Body>.Result, status: ClientReply<Body>.Status, to key: RequestKey, version: UInt8,
        now: UInt64
    ) {
        requestIDs.removeValue(forKey: key)
        if status == .error { statistics.errorReplies += 1 } else { statistics.finalReplies += 1 }
        actions.append(
            .reply(
                ClientReply(
                    client: key.client, command: .reply, requestID: key.id, status: status, phase: result.phase,
                    payload: result.payload, version: version)))
        results.store(result, for: key, now: now)
    }

    /// What the end of a keyed request means for its key: a reply written by a worker is an outcome (kept for
    /// replays), except a cancelled handler's clean stop; an error the broker wrote after a handle job went out
    /// leaves it unknown (retried as the next attempt, once no live worker may still run this one); before any
    /// handle job went out, nothing happened.
    private mutating func recordOutcome(
        of request: BrokerRequest<Body>, _ scope: IdempotencyScope, result: ResultStore<Body>.Result, now: UInt64
    ) {
        if request.state == .stoppedCleanly {
            // The worker answered that the cancelled handler stopped before doing anything: the next attempt may
            // run at once (section 4.10.2).
            idempotency.outcomeUnknown(scope, runningOn: nil, now: now)
        } else if case .body = result.payload {
            idempotency.complete(scope, with: result, cost: request.bodySize, now: now)
        } else if request.handleSent {
            var running: WorkerID?
            if case let (worker, job)? = request.job, workers[worker]?.jobs[job] != nil {
                running = worker
                unknownAttempts[job] = scope
            }
            idempotency.outcomeUnknown(scope, runningOn: running, now: now)
        } else {
            idempotency.forget(scope, now: now)
        }
        statistics.idempotencyEvictions = idempotency.evictedEarly
    }

    /// Ends a request with an error the broker writes.
    mutating func fail(_ id: RequestID, _ code: WireErrorCode, _ message: String, now: UInt64) {
        end(id, status: .error, payload: .bytes(WireBody.error(code, message)), outcome: code.rawValue, now: now)
    }

    /// The label of intent type `type` in metrics: its name, or `other` past ``BrokerMetrics/maxLabelValues`` types.
    func metricsLabel(ofType type: Int?) -> String {
        guard let type else { return "" }
        guard type < BrokerMetrics.maxLabelValues else { return "other" }
        return metrics?.intentLabel(type) { intentTypes[type].displayName } ?? ""
    }

    /// The metrics outcome of a request a worker's RESULT ends: `final`, or `handler-error` / `cancelled`.
    static func metricsOutcome(_ outcome: JobOutcome) -> String {
        switch outcome {
        case .error: "handler-error"
        case .cancelled: "cancelled"
        case .continue, .stop: "final"
        }
    }

    /// Answers a message or request that was not accepted (nothing is stored).
    mutating func reject(
        client: [UInt8], requestID: [UInt8], phase: StaticString, version: UInt8 = 1, _ code: WireErrorCode,
        _ message: String, command: ClientReply<Body>.Command = .reply, intentType: Int? = nil
    ) {
        reject(
            client: client, requestID: requestID, phase: phase, version: version, code,
            body: WireBody.error(code, message), command: command, intentType: intentType)
    }

    /// ``reject(client:requestID:phase:version:_:_:command:intentType:)`` with the error body already built.
    mutating func reject(
        client: [UInt8], requestID: [UInt8], phase: StaticString, version: UInt8 = 1, _ code: WireErrorCode,
        body: [UInt8], command: ClientReply<Body>.Command = .reply, intentType: Int? = nil
    ) {
        statistics.errorReplies += 1
        if command == .reply {
            metrics?.requestEnded(
                intent: metricsLabel(ofType: intentType), phase: phase.description, outcome: code.rawValue,
                finalNanoseconds: nil, firstReply: false)
        }
        actions.append(
            .reply(
                ClientReply(
                    client: client, command: command, requestID: requestID, status: .error, phase: phase,
                    payload: .bytes(body), version: version)))
    }
}
