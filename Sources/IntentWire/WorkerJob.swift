/// A JOB whose frames passed the worker's checks (`Schemas/PROTOCOL.md` section 5.12). The body is not copied: it
/// stays in frame ``bodyIndex`` of the message.
public struct WorkerJob: Sendable, Hashable {
    /// The index of the body frame (F6) in versions 01 to 05.
    public static let bodyIndex = 6

    /// The index of this job's body frame: F6, or F3 in version 06 (section 5.17).
    public var bodyIndex: Int { version >= 6 ? 3 : Self.bodyIndex }

    /// F2: the job id, 8 opaque bytes, to echo in the RESULT.
    public let jobID: [UInt8]
    /// F3: the intent type, 1...255 bytes of UTF-8.
    public let intentType: String
    /// F4: the phase, `resolve`, `confirm` or `handle` (never `lifecycle`).
    public let phase: RequestPhase
    /// F5: the time left until the request's deadline, in milliseconds (0 once it has passed).
    public let timeLeftMilliseconds: Int
    /// The size of the body (F6), at least 1.
    public let bodySize: Int
    /// Version 02, F7: the request's idempotency key (section 4.10.1), nil for none (and in version 01).
    public let idempotencyKey: [UInt8]?
    /// Version 02, F8: the number of the attempt with this key, from 1 (1 without a key, and in version 01).
    public let attempt: Int
    /// Version 03, F9: the last phase the worker runs for this job (section 5.15), ``phase`` itself for a job of one
    /// phase (and in versions 01 and 02). After a `continue` of an earlier phase, the worker runs the next phase on
    /// that phase's output, with the same job id.
    public let lastPhase: RequestPhase
    /// The protocol version of the JOB (its signature): 1 to 6.
    public let version: UInt8
    /// Version 05, F10 and F11: the W3C trace context the handler's span is a child of (the request's own, or the
    /// broker's job span when the broker traces); nil for none (and before version 05).
    public let traceContext: TraceContext?

    /// A job with these fields (the decoder makes them; tests and fuzz targets compare them).
    public init(
        jobID: [UInt8], intentType: String, phase: RequestPhase, timeLeftMilliseconds: Int, bodySize: Int,
        idempotencyKey: [UInt8]? = nil, attempt: Int = 1, lastPhase: RequestPhase? = nil, version: UInt8 = 1,
        traceContext: TraceContext? = nil
    ) {
        self.jobID = jobID
        self.intentType = intentType
        self.phase = phase
        self.timeLeftMilliseconds = timeLeftMilliseconds
        self.bodySize = bodySize
        self.idempotencyKey = idempotencyKey
        self.attempt = attempt
        self.lastPhase = lastPhase ?? phase
        self.version = version
        self.traceContext = traceContext
    }
}
