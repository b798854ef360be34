import IntentWire

/// What the broker core asks its I/O shell to do. The core decides; the shell only sends frames.
enum BrokerAction<Body> {
    /// Send a JOB to a worker (section 5.7). Before sending, the shell asks ``BrokerCore/shouldSend(_:)``: the job
    /// may have been re-dispatched or its request ended since it was booked.
    case sendJob(JobDispatch<Body>)
    /// Send a REPLY or STATUS answer to a client (sections 4.5, 4.6).
    case reply(ClientReply<Body>)
    /// Answer a PING (section 4.7).
    case pong(client: [UInt8], version: UInt8)
    /// Send a control message to a worker, in its protocol version, after every JOB booked before it (sections 5.5,
    /// 5.8, 5.9, 5.13).
    case control(routingID: [UInt8], version: UInt8, WorkerControl)
    /// Write a line of a recorded conversation's transcript (`Docs/TRANSCRIPTS.md`).
    case transcript(TranscriptLine)
    /// A moment a span marks (only with ``BrokerConfiguration/tracing``; Docs/TRACING.md).
    case trace(TraceEvent)
}

/// A JOB to send: `[worker, CIPW01, JOB, job id, intent type, phase, time left, body]`, and for a version-02 worker
/// the idempotency key and the attempt (section 5.13).
struct JobDispatch<Body> {
    let worker: WorkerID
    let routingID: [UInt8]
    let jobID: UInt64
    let request: RequestID
    let intentType: [UInt8]
    let phase: RequestPhase
    /// The request's deadline (monotonic nanoseconds): the shell sends the time left until it (F5).
    let deadline: UInt64
    let body: Body
    /// The worker's protocol version: 2 adds F7 (key) and F8 (attempt), 3 adds F9 (the last phase).
    var version: UInt8 = 1
    /// For a lifecycle's job on a version-03 worker, the last phase the worker runs (section 5.15); nil for a job
    /// of one phase.
    var chainedThrough: RequestPhase?

    /// The last phase the worker runs for this job (F9 of a version-03 JOB).
    var lastPhase: RequestPhase { chainedThrough ?? phase }
    /// The request's idempotency key, for a handle job of a keyed request.
    var idempotencyKey: [UInt8]?
    /// The attempt with that key (1 without one).
    var attempt = 1
    /// The request's trace context, for a version-05 worker (F10, F11); nil for none.
    var traceContext: TraceContext?
}

/// A REPLY, STATUS or CONVERSATION answer: `[client, CIPC01, command, id, status, phase, body]` (a CONVERSATION
/// answer's id is the conversation id).
struct ClientReply<Body> {
    enum Command { case reply, status, conversation }
    /// `final`, `progress` or `error` (F4), as IntentWire's codec names them.
    typealias Status = BrokerReply.Status
    let client: [UInt8]
    let command: Command
    let requestID: [UInt8]
    let status: Status
    let phase: StaticString
    let payload: ReplyPayload<Body>
    /// A stored final reply sent again for an idempotency key: flagged `replay` on the wire.
    var isReplay = false
    /// The client protocol version of the message answered (its signature, and in version 2 the flags frame).
    var version: UInt8 = 1
}

/// The body of a reply: one the broker wrote (error, progress), or a worker's, forwarded unchanged (IntentWire's
/// codec writes either without copying a worker's).
typealias ReplyPayload<Body> = WirePayload<Body>

extension ClientReply.Command {
    /// The codec's name of the answer (F2).
    var kind: BrokerReply.Kind {
        switch self {
        case .reply: .reply
        case .status: .status
        case .conversation: .conversation
        }
    }
}

/// Control messages from the broker to a worker.
enum WorkerControl: Equatable {
    case heartbeat
    /// The acknowledgement of DRAIN (section 5.5).
    case drainAcknowledged
    case disconnect
    /// ERROR with a code and a message (section 5.9).
    case error(WireErrorCode, String)
    /// CANCEL of a job (version 02, section 5.13).
    case cancel(jobID: UInt64)
    /// The answer to a STATS query (section 5.14), with its JSON body; the peer need not be a registered worker.
    case stats([UInt8])
}
