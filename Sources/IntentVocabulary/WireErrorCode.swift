/// A stable error code carried in error bodies: `{"code": CODE, "message": text}` (`Schemas/PROTOCOL.md` section
/// 10.2).
///
/// The one definition of the protocol's error codes, the broker's and the worker's: IntentKit's `IntentError` uses
/// it as its `Code`. New codes may be added.
public struct WireErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code on the wire, e.g. `bad-body`.
    public let rawValue: String
    /// Creates a code from its wire form.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates a code from its wire form.
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Wrong number of frames, or an empty frame where one is required.
    public static let malformed = WireErrorCode("malformed")
    /// The signature frame names another protocol or version.
    public static let unsupportedVersion = WireErrorCode("unsupported-version")
    /// The command frame is not a command of this sub-protocol.
    public static let unknownCommand = WireErrorCode("unknown-command")
    /// The request id is empty or longer than 255 bytes.
    public static let badRequestID = WireErrorCode("bad-request-id")
    /// The phase frame is not resolve, confirm, handle or lifecycle.
    public static let badPhase = WireErrorCode("bad-phase")
    /// The deadline frame is not a decimal number of milliseconds within bounds.
    public static let badDeadline = WireErrorCode("bad-deadline")
    /// A `CIPC04` REQUEST or TURN carries a traceparent (F8) or tracestate (F9) that is not W3C Trace Context
    /// (`Schemas/PROTOCOL.md` section 4.2), or a tracestate without a traceparent.
    public static let badTraceContext = WireErrorCode("bad-trace-context")
    /// The body is larger than the broker's maximum.
    public static let tooLarge = WireErrorCode("too-large")
    /// The request id is already in flight on this connection.
    public static let duplicateRequest = WireErrorCode("duplicate-request")
    /// No worker serves this intent type, or the worker has no handler for it.
    public static let unknownIntent = WireErrorCode("unknown-intent")
    /// The broker's queue is full.
    public static let busy = WireErrorCode("busy")
    /// The request's hard time limit passed.
    public static let timeout = WireErrorCode("timeout")
    /// The worker running a handle job died; the job is not run again.
    public static let workerLost = WireErrorCode("worker-lost")
    /// Workers running the request's resolve or confirm job were lost (crashed or froze) more often than the broker
    /// re-dispatches a job (`--max-crash-retries`, default 1): the request itself is suspect and is not run again
    /// (section 6.7).
    public static let workerCrashed = WireErrorCode("worker-crashed")
    /// A worker's READY announced a definition of an intent type that differs from the one the broker serves
    /// (section 5.16): the worker is not registered.
    public static let definitionMismatch = WireErrorCode("definition-mismatch")
    /// A STATUS query names a request the broker does not know (any more).
    public static let unknownRequest = WireErrorCode("unknown-request")
    /// A resolve handler threw, or set a resolution for an undeclared parameter.
    public static let handlerFailed = WireErrorCode("handler-failed")
    /// The worker could not decode the body: invalid JSON, wrong shape, an intent type other than the JOB's.
    public static let badBody = WireErrorCode("bad-body")
    /// The intent has a parameter its definition does not declare.
    public static let unknownParameter = WireErrorCode("unknown-parameter")
    /// A parameter's value does not have the declared type (wrong JSON type, or a malformed value of it).
    public static let invalidType = WireErrorCode("invalid-type")
    /// A numeric parameter's value is outside the definition's `minimum`...`maximum`.
    public static let outOfRange = WireErrorCode("out-of-range")
    /// A confirm or handle job's intent lacks a parameter its definition requires: no handler code ran (section 5.11).
    public static let missingParameter = WireErrorCode("missing-parameter")
    /// An enumeration parameter's value is not one of its cases.
    public static let invalidEnum = WireErrorCode("invalid-enum")
    /// The broker is shutting down.
    public static let shuttingDown = WireErrorCode("shutting-down")
    /// An unexpected failure inside Concierge.
    public static let `internal` = WireErrorCode("internal")
    /// The idempotency key was first used with another body (`Docs/IDEMPOTENCY.md`): the key names one operation,
    /// so another body under it is a caller's mistake, not a retry.
    public static let idempotencyConflict = WireErrorCode("idempotency-conflict")
    /// The request was cancelled by its client (CANCEL), or the job by the broker (section 4.10.2, 5.13).
    public static let cancelled = WireErrorCode("cancelled")
    /// The broker restarted (or another took over) while the request's handle job ran: whether it ran is unknown
    /// (the journal records a handle job before it is sent, not its end: `Docs/JOURNAL.md`). With an idempotency
    /// key, a retry runs as the next attempt.
    public static let outcomeUnknown = WireErrorCode("outcome-unknown")
    /// The broker cannot record new work: its journal's database is unreachable, and what it cannot record it must
    /// not accept (`Docs/JOURNAL.md`). Nothing was accepted; the broker recovers by itself when the database
    /// returns, so the request may be sent again later.
    public static let unavailable = WireErrorCode("unavailable")
    /// The broker's permissions file (`Docs/PERMISSIONS.md`) does not let the sender's identity send this intent
    /// type in this phase, or a worker's identity serve one of the types its READY announced (PROTOCOL.md 13.3).
    public static let forbidden = WireErrorCode("forbidden")

    /// No conversation with this id belongs to this client (never started, forgotten, or another client's: the same
    /// answer, so that nothing leaks).
    public static let unknownConversation = WireErrorCode("unknown-conversation")
    /// The conversation ended; the error body carries its `"conversation"` object with the ending.
    public static let conversationEnded = WireErrorCode("conversation-ended")
    /// A TURN's number is neither the conversation's next turn nor its last one (which is attached or replayed).
    public static let turnMismatch = WireErrorCode("turn-mismatch")
    /// An answer names a parameter the conversation does not ask about now, or confirms when nothing waits for it.
    public static let notAsked = WireErrorCode("not-asked")
    /// An answer chose an option that the parameter's disambiguation does not have.
    public static let badOption = WireErrorCode("bad-option")
    /// A TURN's body is not a valid answer (or, for turn 1, has no intent type).
    public static let badAnswer = WireErrorCode("bad-answer")
    /// A parameter would have been asked more often than the conversation's bound: the conversation ended.
    public static let tooManyAsks = WireErrorCode("too-many-asks")
}
