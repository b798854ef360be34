import ConciergeJSON
import IntentJournal
import IntentTranscript
import IntentWire
import Logging
import Testing

@testable import IntentBroker

/// Drives a ``BrokerCore`` without sockets: events go in one method call at a time, and the harness performs the
/// core's actions the way the I/O shell does (asking ``BrokerCore/shouldSend(_:)`` before each JOB), recording what
/// each client and worker would have received. Time only moves when a test says so.
struct CoreHarness: ~Copyable {
    struct Reply: Equatable, CustomStringConvertible {
        let client: String
        let id: String
        let command: ClientReply<[UInt8]>.Command
        let status: ClientReply<[UInt8]>.Status
        let phase: String
        let body: String
        var isReplay = false

        var isEnding: Bool { command == .reply && status != .progress }
        /// The error code of an error body.
        var code: String? {
            let marker = #"{"code":""#
            guard status == .error, body.hasPrefix(marker) else { return nil }
            return String(body.dropFirst(marker.count).prefix { $0 != "\"" })
        }
        var description: String { "\(command) \(id) \(status) \(phase) \(body)" }
    }

    var core: BrokerCore<[UInt8]>
    /// Monotonic nanoseconds (starts at 1 s).
    var now: UInt64 = 1_000_000_000
    var replies: [Reply] = []
    /// JOBs each worker received and has not answered, in order.
    var jobs: [String: [JobDispatch<[UInt8]>]] = [:]
    /// The moments the core told of for spans (with ``BrokerConfiguration/tracing`` only), in order.
    var traces: [TraceEvent] = []
    var controls: [(worker: String, control: WorkerControl)] = []
    var pongs: [String] = []
    /// The request id of every JOB delivered, by job id; and every JOB delivered, in order.
    var jobRequest: [UInt64: String] = [:]
    var delivered: [(worker: String, request: String, phase: RequestPhase)] = []
    /// The phase each chained job (section 5.15) is in at its worker, by job id, once past its first; and every
    /// phase a worker went on to within a chained job, in order (a handle there runs without a JOB of its own).
    var chainPhase: [UInt64: RequestPhase] = [:]
    var chained: [(worker: String, request: String, phase: RequestPhase)] = []
    /// Workers whose send queue is full (a JOB send fails with EAGAIN) or that are unreachable (EHOSTUNREACH).
    var blocked: Set<String> = []
    var unreachable: Set<String> = []
    /// Checked after every step.
    var checkInvariants = true
    /// Every transcript line the core asked the shell to write, in order.
    var transcript: [(conversation: String, step: TranscriptLine.Step, line: JSONObject)] = []

    /// With a journal: what the journal holds, as the shell would have committed it batch by batch.
    var journal: JournalModel?
    /// What the journal will hold once the commit in flight is written.
    var pendingJournal: JournalModel?
    /// With `holdCommits`, a commit stays in flight until ``finishCommit(failing:)``; without, it is written at once.
    var holdCommits = false
    /// The journal's database cannot be reached: commits, checks and opening fail with `journal-unavailable`.
    var databaseDown = false
    /// Another broker holds the journal's leader lock: opening it fails with `journal-locked`.
    var journalTaken = false
    /// What the journal link asked of the shell, in order.
    var linkActions: [JournalLinkAction] = []
    /// The requests (`client/id`) whose answer was decided but dropped because the journal failed before it could
    /// record it: as when the shell drops them, their clients hear nothing (they send again).
    var unanswered: Set<String> = []
    /// Why the broker stopped (the journal failed, or another broker took it over): its process is gone.
    var stopped: JournalError?
    let configuration: BrokerConfiguration

    /// With `journaling`, the journal is a PostgreSQL one (unless `configuration` names another): one that can be
    /// unreachable for a while, and that another broker can take over.
    init(_ configuration: BrokerConfiguration = .init(), journaling: Bool = false) throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = configuration
        if journaling && configuration.journalPath == nil { configuration.journalPath = "postgresql://db/journal" }
        self.configuration = configuration
        // Permissions need CURVE (BrokerConfiguration.validate()), which is the shell's: the rules are checked without
        // keys, every other setting as the broker checks it.
        var checked = configuration
        checked.permissions = nil
        try checked.validate()
        core = BrokerCore(validated: configuration, logger: logger, now: 1_000_000_000, journaling: journaling)
        if journaling { journal = JournalModel() }
    }

    /// The broker process dies (SIGKILL: nothing but the journal survives) and a new one starts from the journal
    /// at the same moment; the workers' connections and jobs are gone with it (they register again).
    mutating func restart() throws {
        // A commit that failed is acted on at the end of the turn, before the process dies.
        if core.journalLink.hasFailed { endTurn() }
        stopped = nil
        databaseDown = false
        journalTaken = false
        // The commits in flight are written before the process dies (a crash before loses only requests that were
        // never acknowledged, which the checks of the randomized sequences cannot tell from lost ones).
        let hold = holdCommits
        holdCommits = false
        finishCommit()
        holdCommits = hold
        guard let journal else { return }
        // What the dying broker had in flight is exactly what the journal holds open (unless it could not reach
        // the journal, or its last commit failed: then it held nothing, or nothing it acted on).
        let consistent = core.journalLink.state == .idle
        let live = Set(
            core.requests.values.flatMap { [$0.key] + $0.listeners.map(\.key) }.map {
                String(decoding: $0.id, as: UTF8.self)
            })
        let recorded = Set(
            journal.open.values.flatMap { [$0.request.key] + $0.listeners.map(\.key) }.map {
                String(decoding: $0.id, as: UTF8.self)
            })
        #expect(!consistent || live == recorded, "in flight \(live.sorted()), journaled \(recorded.sorted())")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        core = try BrokerCore(configuration: configuration, logger: logger, now: now, journaling: true)
        jobs = [:]
        blocked = []
        unreachable = []
        core.restore(
            requests: journal.recoveredRequests, results: journal.recoveredResults,
            keyRecords: journal.recoveredKeyRecords, conversations: journal.recoveredConversations,
            nextRequestID: journal.nextRequestID, now: now)
        settle()
    }

    // MARK: Events

    /// Worker `name` sends READY; `identity` stands for its CURVE public key.
    mutating func register(
        _ name: String, capacity: Int = 1, types: [String] = ["Echo"], version: UInt8 = 1, identity: String = ""
    ) {
        let ready = WorkerReady(
            capacity: capacity, name: Array(name.utf8), intentTypes: types.map { Array($0.utf8) }, version: version)
        core.workerMessage(
            .ready(ready), from: Array(name.utf8), resultBody: nil, identity: Array(identity.utf8), now: now)
        settle()
    }

    mutating func send(
        _ id: String, type: String = "Echo", phase: RequestPhase = .handle, deadlineMs: Int? = nil,
        client: String = "c1", body: String = "{}", key: String? = nil, identity: String = "",
        traceContext: TraceContext? = nil, definitionVersion: Int? = nil
    ) {
        let request = ClientRequest(
            requestID: Array(id.utf8), intentType: Array(type.utf8), phase: phase, deadlineMilliseconds: deadlineMs,
            bodySize: body.utf8.count, idempotencyKey: key.map { Array($0.utf8) },
            version: traceContext != nil ? 4 : key != nil ? 2 : 1, traceContext: traceContext,
            definitionVersion: definitionVersion)
        core.request(
            request, client: Array(client.utf8), body: Array(body.utf8),
            fingerprint: key == nil ? nil : BodyFingerprint(Array(body.utf8)), identity: Array(identity.utf8), now: now)
        settle()
    }

    /// The client sends TURN `number` of conversation `conversation` (version 03) as request `id`.
    mutating func turn(
        _ id: String, conversation: String, number: Int, body: String, flags: ClientTurn.Flags = [],
        deadlineMs: Int? = nil, client: String = "c1", identity: String = "", traceContext: TraceContext? = nil
    ) {
        let turn = ClientTurn(
            requestID: Array(id.utf8), conversationID: Array(conversation.utf8), turn: number,
            deadlineMilliseconds: deadlineMs, bodySize: body.utf8.count, flags: flags,
            version: traceContext == nil ? 3 : 4, traceContext: traceContext)
        core.turn(turn, client: Array(client.utf8), body: Array(body.utf8), identity: Array(identity.utf8), now: now)
        settle()
    }

    /// The client reads conversation `conversation` (CONVERSATION); returns the answer.
    @discardableResult
    mutating func readConversation(_ conversation: String, client: String = "c1", identity: String = "") -> Reply? {
        core.readConversation(
            id: Array(conversation.utf8), client: Array(client.utf8), identity: Array(identity.utf8), now: now)
        settle()
        return replies.last { $0.command == .conversation && $0.id == conversation && $0.client == client }
    }

    /// The client ends conversation `conversation` (END); returns the answer.
    @discardableResult
    mutating func endConversation(_ conversation: String, client: String = "c1") -> Reply? {
        core.endConversation(id: Array(conversation.utf8), client: Array(client.utf8), now: now)
        settle()
        return replies.last { $0.command == .conversation && $0.id == conversation && $0.client == client }
    }

    mutating func status(_ id: String, client: String = "c1", identity: String = "") {
        core.status(client: Array(client.utf8), requestID: Array(id.utf8), identity: Array(identity.utf8), now: now)
        settle()
    }

    /// The client sends CANCEL (version 02) for request `id`; `identity` stands for its CURVE public key.
    mutating func cancel(_ id: String, client: String = "c1", identity: String = "") {
        core.cancel(client: Array(client.utf8), requestID: Array(id.utf8), identity: Array(identity.utf8), now: now)
        settle()
    }

    /// The request ids of the jobs the broker sent CANCEL for to `worker`, in order.
    func cancels(to worker: String) -> [String] {
        controls.compactMap { entry -> String? in
            guard entry.worker == worker, case .cancel(let job) = entry.control else { return nil }
            return jobRequest[job] ?? "?"
        }
    }

    /// The worker answers its oldest job (or the one for request `id`).
    mutating func answer(
        _ worker: String, request id: String? = nil, outcome: WorkerResult.Outcome = .stop,
        body: String = "{\"done\":1}"
    ) {
        guard var queue = jobs[worker], !queue.isEmpty else {
            Issue.record("worker \(worker) has no job to answer")
            return
        }
        let index = id.flatMap { id in queue.firstIndex { requestID(of: $0) == id } } ?? 0
        let job = queue[index]
        let phase = chainPhase[job.jobID] ?? job.phase
        if outcome == .continue, phase.order < job.lastPhase.order, let next = phase.next {
            // A chained job: the worker goes on with the next phase at once, and keeps the job.
            chainPhase[job.jobID] = next
            chained.append((worker, jobRequest[job.jobID] ?? "?", next))
        } else {
            queue.remove(at: index)
            chainPhase[job.jobID] = nil
        }
        jobs[worker] = queue
        let result = WorkerResult(jobID: job.jobID, outcome: outcome, bodySize: body.utf8.count)
        // The frame checks answer `.unregistered` for a worker the broker does not know (any more).
        let command: WorkerCommand = core.isRegistered(Array(worker.utf8)) ? .result(result) : .unregistered(.result)
        core.workerMessage(command, from: Array(worker.utf8), resultBody: Array(body.utf8), now: now)
        settle()
    }

    /// A worker sends a command without a body (heartbeat, drain, disconnect).
    mutating func worker(_ worker: String, sends command: WorkerCommand) {
        if case .disconnect = command { jobs[worker] = nil }
        core.workerMessage(command, from: Array(worker.utf8), resultBody: nil, now: now)
        settle()
    }

    /// Moves time on and lets the core act on it (one turn of the shell's loop, its end included).
    mutating func advance(ms: UInt64) {
        now += ms * 1_000_000
        core.tick(now: now)
        settle()
        endTurn()
    }

    /// A STATS query from `peer` (registered or not).
    mutating func stats(from peer: String, version: UInt8 = 2) {
        core.statsRequested(by: Array(peer.utf8), version: version, now: now)
        settle()
    }

    // MARK: The journal link

    /// The commit in flight is written, or fails with `failing` (`journal-unavailable` while ``databaseDown``).
    mutating func finishCommit(failing code: JournalError.Code? = nil) {
        guard core.journalLink.isCommitting else { return }
        var buffer: [BrokerAction<[UInt8]>] = []
        if let code = code ?? (databaseDown ? .unavailable : nil) {
            noteUnanswered(core.journalLink.awaiting)
            noteUnanswered(core.actions)
            pendingJournal = nil
            core.commitFinished(.failure(JournalError(code: code, message: "test")), into: &buffer, now: now)
        } else {
            journal = pendingJournal
            pendingJournal = nil
            core.commitFinished(.success(()), into: &buffer, now: now)
            perform(buffer)
        }
        settle()
    }

    /// The end of a turn of the shell's loop: it does what the journal link asks (a sync or leadership check, which
    /// fails while ``databaseDown``; opening the journal again; closing it).
    mutating func endTurn() {
        var action = core.journalDue(now: now)
        while true {
            linkActions.append(action)
            switch action {
            case .sync(let check):
                if databaseDown {
                    noteUnanswered(core.actions)
                    core.journalFailed(JournalError(code: .unavailable, message: "test"), now: now)
                    action = core.journalDue(now: now)
                    continue
                }
                if check { core.journalAnswered(now: now) }
            case .reopen:
                action = openJournal()
                if action != .none { continue }
            case .close:
                // The workers were sent away (DISCONNECT): their connections, and the jobs on them, are gone.
                jobs = [:]
                blocked = []
                unreachable = []
            case .stop(let error):
                stopped = error
            case .none, .retryLater, .standBy:
                break
            }
            settle()
            return
        }
    }

    /// The shell opens the journal (again, or as a standby taking over): it fails while ``databaseDown`` or
    /// ``journalTaken``; otherwise the core recovers from what the journal holds.
    mutating func openJournal() -> JournalLinkAction {
        if databaseDown { return core.journalOpenFailed(JournalError(code: .unavailable, message: "test"), now: now) }
        if journalTaken { return core.journalOpenFailed(JournalError(code: .locked, message: "test"), now: now) }
        core.journalOpened(now: now)
        let journal = journal ?? JournalModel()
        core.restore(
            requests: journal.recoveredRequests, results: journal.recoveredResults,
            keyRecords: journal.recoveredKeyRecords, nextRequestID: journal.nextRequestID, now: now)
        settle()
        return .none
    }

    mutating func shutdown(finish: Bool) {
        core.beginShutdown(now: now)
        if finish { core.finishShutdown(now: now) }
        settle()
    }

    // MARK: Performing actions

    /// Performs what the core decided, the way the shell does: at once, or (with a journal) once the batch's
    /// commit is written; the journal model checks that every REPLY and JOB was recorded first.
    mutating func settle() {
        var buffer: [BrokerAction<[UInt8]>] = []
        var entries: [JournalEntry<[UInt8]>] = []
        if core.journalLink.hasFailed { noteUnanswered(core.actions) }
        batches: while true {
            switch core.nextBatch(actions: &buffer, entries: &entries) {
            case .wait:
                break batches
            case .perform:
                perform(buffer)
            case .commit(let changed):
                var next = journal ?? JournalModel()
                next.apply(entries, changed: changed, core: core, now: now)
                pendingJournal = next
                if holdCommits { break batches }
                journal = pendingJournal
                pendingJournal = nil
                core.commitFinished(.success(()), into: &buffer, now: now)
                perform(buffer)
            }
        }
        if checkInvariants {
            let problems = core.invariantViolations()
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    private mutating func noteUnanswered(_ actions: [BrokerAction<[UInt8]>]) {
        for case .reply(let reply) in actions where reply.command == .reply && reply.status != .progress {
            unanswered.insert(
                String(decoding: reply.client, as: UTF8.self) + "/" + String(decoding: reply.requestID, as: UTF8.self))
        }
    }

    /// Performs one batch of actions in order, recording what each client and worker receives.
    private mutating func perform(_ buffer: [BrokerAction<[UInt8]>]) {
        if let journal { journal.checkRecorded(buffer) }
        var index = 0
        while index < buffer.count {
            defer { index += 1 }
            switch buffer[index] {
            case .sendJob(let job):
                guard core.shouldSend(job, now: now) else { continue }
                journal?.checkRecorded(job)
                let name = String(decoding: job.routingID, as: UTF8.self)
                if unreachable.contains(name) {
                    var unsent = [job]
                    for case .sendJob(let other) in buffer[(index + 1)...] where other.worker == job.worker {
                        unsent.append(other)
                    }
                    core.workerUnreachable(job.worker, unsent: unsent, now: now)
                } else if blocked.contains(name) {
                    core.jobNotSentWorkerBlocked(job, now: now)
                } else {
                    let id = core.requests[job.request].map { String(decoding: $0.key.id, as: UTF8.self) } ?? "?"
                    jobRequest[job.jobID] = id
                    delivered.append((name, id, job.phase))
                    jobs[name, default: []].append(job)
                }
            case .reply(let reply):
                let body: String =
                    switch reply.payload {
                    case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
                    case .body(let bytes): String(decoding: bytes, as: UTF8.self)
                    }
                replies.append(
                    Reply(
                        client: String(decoding: reply.client, as: UTF8.self),
                        id: String(decoding: reply.requestID, as: UTF8.self), command: reply.command,
                        status: reply.status, phase: reply.phase.description, body: body, isReplay: reply.isReplay))
            case .pong(let client, _):
                pongs.append(String(decoding: client, as: UTF8.self))
            case .control(let routingID, _, let control):
                controls.append((String(decoding: routingID, as: UTF8.self), control))
            case .transcript(let line):
                transcript.append(
                    (
                        line.conversation.name, line.step,
                        line.record.map { (try? JSONValue.parse($0.jsonLineBytes()))?.objectValue ?? [:] } ?? [:]
                    ))
            case .trace(let event):
                traces.append(event)
            }
        }
    }

    // MARK: Reading the outcome

    func requestID(of job: JobDispatch<[UInt8]>) -> String? { jobRequest[job.jobID] }

    /// Every reply for request `id` (REPLY command only).
    func replies(to id: String, client: String = "c1") -> [Reply] {
        replies.filter { $0.id == id && $0.client == client && $0.command == .reply }
    }

    /// The final or error REPLYs of request `id` (exactly one once it ended).
    func endings(of id: String, client: String = "c1") -> [Reply] {
        replies(to: id, client: client).filter(\.isEnding)
    }

    /// The request ids of the JOBs a worker holds, in order.
    func jobIDs(_ worker: String) -> [String] { (jobs[worker] ?? []).compactMap { requestID(of: $0) } }

    var queued: Int { core.queuedCount }
}
