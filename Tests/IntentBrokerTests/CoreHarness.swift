import IntentWire
import Logging
import Testing

@testable import IntentBroker

/// Drives a ``BrokerCore`` without sockets: events go in one method call at a time, and the harness performs the
/// core's actions the way the I/O shell does (asking ``BrokerCore/shouldSend(_:)`` before each JOB), recording what
/// each client and worker would have received. Time only moves when a test says so.
struct CoreHarness {
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

    /// With a journal (issue 12): what the journal holds, as the shell would have committed it batch by batch.
    var journal: JournalModel?
    let configuration: BrokerConfiguration

    init(_ configuration: BrokerConfiguration = .init(), journaling: Bool = false) throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        self.configuration = configuration
        core = try BrokerCore(
            configuration: configuration, logger: logger, now: 1_000_000_000, journaling: journaling)
        if journaling { journal = JournalModel() }
    }

    /// The broker process dies (SIGKILL: nothing but the journal survives) and a new one starts from the journal
    /// at the same moment; the workers' connections and jobs are gone with it (they register again).
    mutating func restart() throws {
        guard let journal else { return }
        // What the dying broker had in flight is exactly what the journal holds open.
        let live = Set(
            core.requests.values.flatMap { [$0.key] + $0.listeners.map(\.key) }.map {
                String(decoding: $0.id, as: UTF8.self)
            })
        let recorded = Set(
            journal.open.values.flatMap { [$0.request.key] + $0.listeners.map(\.key) }.map {
                String(decoding: $0.id, as: UTF8.self)
            })
        #expect(live == recorded, "in flight \(live.sorted()), journaled \(recorded.sorted())")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        core = try BrokerCore(configuration: configuration, logger: logger, now: now, journaling: true)
        jobs = [:]
        blocked = []
        unreachable = []
        core.restore(
            requests: journal.recoveredRequests, results: journal.recoveredResults,
            keyRecords: journal.recoveredKeyRecords, nextRequestID: journal.nextRequestID, now: now)
        settle()
    }

    // MARK: Events

    mutating func register(_ name: String, capacity: Int = 1, types: [String] = ["Echo"], version: UInt8 = 1) {
        let ready = WorkerReady(
            capacity: capacity, name: Array(name.utf8), intentTypes: types.map { Array($0.utf8) }, version: version)
        core.workerMessage(.ready(ready), from: Array(name.utf8), resultBody: nil, now: now)
        settle()
    }

    mutating func send(
        _ id: String, type: String = "Echo", phase: RequestPhase = .handle, deadlineMs: Int? = nil,
        client: String = "c1", body: String = "{}", key: String? = nil, identity: String = ""
    ) {
        let request = ClientRequest(
            requestID: Array(id.utf8), intentType: Array(type.utf8), phase: phase, deadlineMilliseconds: deadlineMs,
            bodySize: body.utf8.count, idempotencyKey: key.map { Array($0.utf8) })
        core.request(
            request, client: Array(client.utf8), body: Array(body.utf8),
            fingerprint: key == nil ? nil : BodyFingerprint(Array(body.utf8)), identity: Array(identity.utf8), now: now)
        settle()
    }

    mutating func status(_ id: String, client: String = "c1") {
        core.status(client: Array(client.utf8), requestID: Array(id.utf8), now: now)
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

    /// Moves time on and lets the core act on it.
    mutating func advance(ms: UInt64) {
        now += ms * 1_000_000
        core.tick(now: now)
        settle()
    }

    mutating func shutdown(finish: Bool) {
        core.beginShutdown(now: now)
        if finish { core.finishShutdown(now: now) }
        settle()
    }

    // MARK: Performing actions

    mutating func settle() {
        var buffer: [BrokerAction<[UInt8]>] = []
        var entries: [JournalEntry<[UInt8]>] = []
        while !core.actions.isEmpty || !core.journal.isEmpty {
            // The shell commits the batch's journal entries before it performs the batch's actions.
            let changed = core.takeJournal(into: &entries)
            if journal != nil {
                journal!.apply(entries, changed: changed, core: core, now: now)
            }
            core.takeActions(into: &buffer)
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
                }
            }
        }
        if checkInvariants {
            let problems = core.invariantViolations()
            #expect(problems.isEmpty, "\(problems)")
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
