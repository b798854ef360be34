import IntentWire

/// The broker's own number for an accepted request: never reused, so a queue entry, a timer or a worker's job that
/// outlives its request can never be mistaken for a later request with the same caller-chosen id.
typealias RequestID = UInt64

/// The broker's own number for a worker registration: a worker that registers again gets a new one.
typealias WorkerID = UInt64

/// A request the broker has accepted and not yet ended (section 6 of the protocol).
///
/// A class: the request table holds one reference per request, and every rule reads and changes the request in
/// place. (As a struct of some twenty fields, each lookup copied it out of the table and back, retaining and
/// releasing each of its arrays: a sixth of the broker loop's instructions per request; `Docs/PROFILES.md`.)
/// Only the broker's loop thread ever touches one.
///
/// Its variables are `@exclusivity(unchecked)`: Swift checks every access to a class's variable at run time (a call
/// into the runtime and a table entry per access, several per request), and these are only touched by one thread,
/// one access at a time, never through `inout` across a call that reaches the same request again. The compiler still
/// checks what it can see statically. (Docs/PROFILES.md, "Exclusivity checks and copies in the loop".)
final class BrokerRequest<Body> {
    /// Where the request is in its lifecycle: waiting in its intent type's queue, running as a job on a worker,
    /// running while its client cancels it, or (only while it ends) stopped cleanly by its handler. A request that
    /// ended is not in the request table at all.
    enum State: Equatable {
        /// In its intent type's queue; `ticket` identifies this stay in the queue (see ``RequestQueue``).
        case queued(ticket: UInt64)
        /// Running as job `job` on worker `worker` (or booked for it and about to be sent).
        case running(worker: WorkerID, job: UInt64)
        /// Running as job `job` on version-02 worker `worker`, which was sent CANCEL: the job's RESULT ends the
        /// request (a lifecycle goes no further), or the cancel grace period does, or, if the job comes back
        /// unanswered, the request ends `cancelled` (PROTOCOL.md 4.10.2).
        case cancelling(worker: WorkerID, job: UInt64)
        /// The worker answered the cancelled job `cancelled`: the handler stopped cleanly (the request is ending:
        /// its key's next attempt may run at once).
        case stoppedCleanly
    }

    let id: RequestID
    let key: RequestKey
    let intentType: Int
    /// The phase the client asked for (a lifecycle runs several job phases).
    let requested: RequestPhase
    /// The job phase now queued or running.
    @exclusivity(unchecked) var phase: RequestPhase
    /// Input of the current job: the request's body, then in a lifecycle each phase's output.
    @exclusivity(unchecked) var body: Body
    let arrival: UInt64
    let deadline: UInt64
    @exclusivity(unchecked) var state: State
    /// Whether the client has had a reply (progress) already.
    @exclusivity(unchecked) var firstReplySent = false
    /// Whether any job of this request was ever given to a worker.
    @exclusivity(unchecked) var started = false
    /// When its current job was booked on a worker (monotonic nanoseconds; handler durations in metrics).
    @exclusivity(unchecked) var bookedAt: UInt64 = 0
    /// Size of ``body`` in bytes (what keeping it as a stored reply costs).
    @exclusivity(unchecked) var bodySize = 0
    /// The idempotency key's record this request runs, and which attempt of the key it is.
    @exclusivity(unchecked) var idempotency: IdempotencyScope?
    @exclusivity(unchecked) var attempt = 1
    /// Whether a handle job of this request was ever given to a worker: ending without an answer then leaves the
    /// key's outcome unknown.
    @exclusivity(unchecked) var handleSent = false
    /// How many workers were lost while running a job of this request (section 6.7): one or more makes it a suspect,
    /// run alone on its next worker; more than ``BrokerConfiguration/maxCrashRetries`` ends it `worker-crashed`.
    @exclusivity(unchecked) var crashes = 0
    /// Requests with the same key and body that arrived while this one was in flight: they get the same ending, and
    /// each its own progress reply at its own deadline.
    @exclusivity(unchecked) var listeners: [Listener] = []
    /// The client protocol version of the REQUEST (its answers use the same).
    @exclusivity(unchecked) var version: UInt8 = 1
    /// The client's identity (PROTOCOL.md 3.4): its CURVE public key (empty without CURVE) and the scope its routing
    /// id names. A CANCEL from the same identity finds the request after a reconnect.
    @exclusivity(unchecked) var identity: [UInt8] = []
    /// The conversation whose turn this request runs (section 4.11), nil for a plain request.
    @exclusivity(unchecked) var conversation: ConversationKey?
    /// The turn's conversation asks before handle: a confirm that answers `ready` ends the request.
    @exclusivity(unchecked) var stopsAtReadyConfirm = false
    /// The caller's W3C trace context (`CIPC04` REQUEST or TURN F8/F9), sent on in each JOB to a `CIPW05` worker;
    /// nil for none, and for a request recovered from a journal (which does not keep it).
    @exclusivity(unchecked) var traceContext: TraceContext?
    /// The definition the request was admitted under (section 5.18): every job of it runs on a worker serving this
    /// definition or a compatible later one. Nil when its type's workers announce no definition.
    @exclusivity(unchecked) var pin: DefinitionPin?

    init(
        id: RequestID, key: RequestKey, intentType: Int, requested: RequestPhase, phase: RequestPhase, body: Body,
        arrival: UInt64, deadline: UInt64, state: State
    ) {
        self.id = id
        self.key = key
        self.intentType = intentType
        self.requested = requested
        self.phase = phase
        self.body = body
        self.arrival = arrival
        self.deadline = deadline
        self.state = state
    }

    var isQueued: Bool {
        if case .queued = state { return true }
        return false
    }

    /// The worker and job running the request (cancelled or not), if any.
    var job: (worker: WorkerID, job: UInt64)? {
        switch state {
        case .running(let worker, let job), .cancelling(let worker, let job): (worker, job)
        case .queued, .stoppedCleanly: nil
        }
    }

    /// The worker running the request's job, if any.
    var worker: WorkerID? { job?.worker }

    /// Whether job `job` on worker `worker` runs the request (a RESULT for it is the request's).
    func runs(job: UInt64, on worker: WorkerID) -> Bool {
        guard let running = self.job else { return false }
        return running.worker == worker && running.job == job
    }

    /// Whether its client cancelled it while a job ran (the ending follows).
    var isCancelling: Bool {
        if case .cancelling = state { return true }
        return false
    }
}

/// A request attached to another through its idempotency key (PROTOCOL.md 4.10.1): it has no job of its own, but its
/// own deadline (a progress reply, or `busy` if the operation has not started by then).
struct Listener {
    let key: RequestKey
    /// Its client protocol version.
    let version: UInt8
    /// When its deadline is acted on (less the reply margin), monotonic nanoseconds.
    let actAt: UInt64
    /// When the broker accepted it, monotonic nanoseconds: its own `elapsed_ms` counts from here (section 11.9).
    /// Nil for one recovered from a journal, which keeps only its deadline: it counts from the request's arrival.
    var arrival: UInt64? = nil
    var progressSent = false
}
