/// Constants of CIP, the Concierge Intent Protocol (see `Schemas/PROTOCOL.md`).
///
/// Every command, status and phase is a short ASCII word in its own frame, so the broker routes by comparing
/// frames and never parses a JSON body.
public enum CIP {
    /// First frame of every client <-> broker message.
    public static let clientSignature: StaticString = "CIPC01"
    /// First frame of a client message of version 02 (`Docs/IDEMPOTENCY.md`), so that a retry never runs an intent
    /// twice: a REQUEST may carry an idempotency key (F7), and REPLY and STATUS answers carry flags (F6).
    public static let clientSignatureV2: StaticString = "CIPC02"

    /// First frame of a client message of version 03 (section 4.11): version 02, and conversations: TURN,
    /// CONVERSATION and END.
    public static let clientSignatureV3: StaticString = "CIPC03"

    /// First frame of a client message of version 04 (section 4.2): version 03, and W3C trace context on REQUEST
    /// and TURN (F8 traceparent, F9 tracestate).
    public static let clientSignatureV4: StaticString = "CIPC04"

    /// The client signature of a version (1 to 4).
    @inlinable
    public static func clientSignature(version: UInt8) -> StaticString {
        switch version {
        case 4: clientSignatureV4
        case 3: clientSignatureV3
        case 2: clientSignatureV2
        default: clientSignature
        }
    }

    /// Flags of a version-02 REPLY or STATUS answer (F6).
    public enum Flags {
        /// No flag.
        public static let none: StaticString = ""
        /// The answer is a stored final reply sent again for an idempotency key.
        public static let replay: StaticString = "replay"
    }
    /// First frame of every worker <-> broker message.
    public static let workerSignature: StaticString = "CIPW01"
    /// First frame of a worker message of version 02 (section 5.13): a JOB carries the idempotency key (F7) and the
    /// attempt (F8), the broker may CANCEL a job, and a RESULT may say `cancelled`.
    public static let workerSignatureV2: StaticString = "CIPW02"
    /// First frame of a worker message of version 03 (section 5.15): version 02, and a JOB names the last phase
    /// (F9) the worker runs on its own, one after the other, a RESULT for each.
    public static let workerSignatureV3: StaticString = "CIPW03"
    /// First frame of a worker message of version 04 (section 5.16): version 03, and READY announces each intent
    /// type's definition after its name.
    public static let workerSignatureV4: StaticString = "CIPW04"

    /// First frame of a worker message of version 05 (section 5.7): version 04, and a JOB carries the W3C trace
    /// context of its request (F10 traceparent, F11 tracestate).
    public static let workerSignatureV5: StaticString = "CIPW05"

    /// First frame of a worker message of version 06: version 05, and a JOB packs its fields into one header frame.
    public static let workerSignatureV6: StaticString = "CIPW06"

    /// The worker signature of a version (1 to 6).
    @inlinable
    public static func workerSignature(version: UInt8) -> StaticString {
        switch version {
        case 6: workerSignatureV6
        case 5: workerSignatureV5
        case 4: workerSignatureV4
        case 3: workerSignatureV3
        case 2: workerSignatureV2
        default: workerSignature
        }
    }

    /// Client -> broker commands.
    public enum Client {
        public static let request: StaticString = "REQUEST"
        public static let status: StaticString = "STATUS"
        public static let ping: StaticString = "PING"
        /// Version 02: stop a request in flight (section 4.10.2).
        public static let cancel: StaticString = "CANCEL"
        /// Version 03: one turn of a conversation (section 4.11).
        public static let turn: StaticString = "TURN"
        /// Version 03: read a conversation.
        public static let conversation: StaticString = "CONVERSATION"
        /// Version 03: end a conversation.
        public static let end: StaticString = "END"
    }

    /// Broker -> client commands.
    public enum Broker {
        public static let reply: StaticString = "REPLY"
        public static let status: StaticString = "STATUS"
        public static let pong: StaticString = "PONG"
        /// Version 03: the answer to CONVERSATION and END.
        public static let conversation: StaticString = "CONVERSATION"
    }

    /// Worker <-> broker commands.
    public enum Worker {
        public static let ready: StaticString = "READY"
        public static let result: StaticString = "RESULT"
        public static let heartbeat: StaticString = "HEARTBEAT"
        public static let drain: StaticString = "DRAIN"
        public static let disconnect: StaticString = "DISCONNECT"
        public static let job: StaticString = "JOB"
        public static let error: StaticString = "ERROR"
        /// Version 02, broker to worker: stop a job (section 5.13).
        public static let cancel: StaticString = "CANCEL"
        /// Version 02, any peer of the backend to the broker and back: the broker's load (section 5.14).
        public static let stats: StaticString = "STATS"
    }

    /// Reply statuses (frame 3 of REPLY and STATUS).
    public enum Status {
        public static let final: StaticString = "final"
        public static let progress: StaticString = "progress"
        public static let error: StaticString = "error"
    }

    /// Job outcomes (frame 3 of RESULT): the words of ``JobOutcome``.
    public enum Outcome {
        public static let `continue`: StaticString = JobOutcome.continue.name
        public static let stop: StaticString = JobOutcome.stop.name
        public static let error: StaticString = JobOutcome.error.name
        /// Version 02: the handler stopped because the job was cancelled.
        public static let cancelled: StaticString = JobOutcome.cancelled.name
    }

    /// Frame counts (after the routing-id frame a ROUTER adds).
    public enum Frames {
        public static let request = 7
        /// A version-02 REQUEST: F7 is the idempotency key (empty for none).
        public static let requestV2 = 8
        /// A version-04 REQUEST: F8 the traceparent, F9 the tracestate (both empty for none).
        public static let requestV4 = 10
        public static let status = 3
        public static let ready = 5  // at least: one intent type
        public static let result = 5
        public static let job = 7
        /// A version-02 JOB: F7 is the idempotency key (empty for none), F8 the attempt.
        public static let jobV2 = 9
        /// A version-03 JOB: F9 is the last phase the worker runs (section 5.15).
        public static let jobV3 = 10
        /// A version-05 JOB with a trace context: F10 the traceparent, F11 the tracestate (without one, `jobV3`).
        public static let jobV5 = 12
        /// A version-06 JOB: signature, `JOB`, the packed header (section 5.17) and the body.
        public static let jobV6 = 4
        /// A version-02 CANCEL, from a client (request id) or from the broker (job id).
        public static let cancel = 3
        /// A STATS query (version 02): F0 and F1 only; its answer adds F2, the body.
        public static let stats = 2
        /// A version-03 TURN: request id, conversation id, turn, deadline, body, flags.
        public static let turn = 8
        /// A version-04 TURN: F8 the traceparent, F9 the tracestate.
        public static let turnV4 = 10
        /// A version-03 CONVERSATION or END: the conversation id.
        public static let conversation = 3
    }

    /// Largest request id and intent type, in bytes.
    public static let maxRequestIDLength = 255
    /// Largest idempotency key, in bytes.
    public static let maxIdempotencyKeyLength = 255
    /// Largest conversation id, in bytes (each printable ASCII, 0x21-0x7E).
    public static let maxConversationIDLength = 255
    public static let maxIntentTypeLength = 255
    /// Largest worker name, in bytes.
    public static let maxWorkerNameLength = 255
    /// The size of a job id, in bytes.
    public static let jobIDLength = 8
    /// Largest worker capacity a READY may announce.
    public static let maxWorkerCapacity = 1000
    /// Bounds of a per-request deadline, in milliseconds.
    public static let deadlineBounds: ClosedRange<Int> = 10...60_000
}

extension StaticString {
    /// The literal's bytes as an array (cold paths).
    public var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: utf8Start, count: utf8CodeUnitCount))
    }

    /// Whether `buffer` holds exactly this literal's bytes.
    @inlinable
    public func matches(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard buffer.count == utf8CodeUnitCount else { return false }
        let literal = UnsafeRawBufferPointer(start: utf8Start, count: utf8CodeUnitCount)
        for index in 0..<buffer.count where buffer[index] != literal[index] { return false }
        return true
    }
}
