/// What a handler knows about the job it runs: passed to every phase method instead of globals.
///
/// ## Idempotency keys and attempts
///
/// A client may send a `handle` (or `lifecycle`) request with an idempotency key (`Schemas/PROTOCOL.md` section
/// 4.10.1). The broker then runs the request's handle job once per key, and runs it again only when the earlier
/// attempt's outcome is unknown (its worker was lost, the hard limit passed, ...). The handle job of such a new
/// attempt carries the same ``idempotencyKey`` and an ``attempt`` of 2 or more. A handler with side effects should
/// follow the Stripe pattern:
///
/// ```swift
/// func handle(intent: SendPaymentIntent, context: HandlerContext) async throws
///     -> HandleResponse<SendPaymentIntent>
/// {
///     // Attempt 2 or later: did an earlier attempt pay already?
///     if let key = context.idempotencyKey, context.attempt >= 2,
///         let earlier = try await payments.find(idempotencyKey: key)
///     {
///         return HandleResponse(code: .success, data: ["paymentId": .string(earlier.id)])
///     }
///     let payment = try await payments.send(intent, idempotencyKey: context.idempotencyKey)
///     return HandleResponse(code: .success, data: ["paymentId": .string(payment.id)])
/// }
/// ```
///
/// On attempt 1 there is nothing to look up, so the fast path costs nothing; record the key with the effect (in the
/// same transaction, or pass it on to a downstream API that takes idempotency keys) so that a later attempt finds it.
///
/// ## Cancellation
///
/// A job runs in a Swift `Task` that the worker cancels when the broker cancels the job (the client sent CANCEL, or
/// the request's hard limit passed). `Task.isCancelled`, `Task.checkCancellation()`, `withTaskCancellationHandler`
/// and cancellable awaits such as `Task.sleep` behave as usual. A handler that stops by throwing `CancellationError`
/// while its job is cancelled is answered `cancelled` (it must not have done anything it cannot undo); a handler
/// that returns a response anyway is answered with that response (a payment that went out is reported, not hidden).
public struct HandlerContext: Sendable {
    /// The job id given by the broker (opaque; for logs).
    public var jobID: String {
        get {
            switch _jobID {
            case .text(let text): return text
            case .bytes(let bytes): return Self.hex(bytes)
            }
        }
        set { _jobID = .text(newValue) }
    }
    /// The job id as given, or as the worker received it (written out as text only when a handler reads it).
    private var _jobID: _JobID
    /// The name of the worker process running the job.
    public var workerName: String
    /// The phase being run.
    public var phase: IntentPhase
    /// When the request's deadline passes, if it has one. Past it the client has been told the request is still in
    /// progress; a long handle should answer ``HandleCode/inProgress`` well before.
    public var deadline: ContinuousClock.Instant?
    /// The request's idempotency key, or nil when the client gave none (always nil for `resolve` and `confirm`, and
    /// from a broker speaking `CIPW01`).
    ///
    /// The key is opaque bytes on the wire (at most 255). A key that is valid UTF-8 (every key sent by
    /// `ConciergeClient`, UUIDs, ...) is given as that text; any other key is given as `0x` followed by its bytes in
    /// lower-case hex (two digits a byte), which is lossless: see ``idempotencyKey(bytes:)``. See the discussion
    /// above for how to use it with ``attempt``.
    public var idempotencyKey: String?
    /// The number of the attempt with ``idempotencyKey``: 1 for the first, 2 or more when the broker runs the request
    /// again because the outcome of an earlier attempt is unknown. Always 1 without a key. From attempt 2 on, consult
    /// your own records of the key before acting again (did attempt 1 already pay?).
    public var attempt: Int
    /// The W3C trace context of the phase this handler runs (`CIPW05` JOB F10/F11, Docs/TRACING.md): with worker
    /// tracing on (`--tracing`), that of the worker's `concierge.handler` span, which is also the task's
    /// `ServiceContext.current` while the handler runs (so spans a handler makes with swift-distributed-tracing
    /// are its children); without, the JOB's own (the broker's job span, or the caller's context passed through).
    /// Nil when the request carries no trace, or the broker or worker speaks an older version. Pass it on to
    /// downstream calls (a `traceparent` header) to continue the trace.
    public var traceContext: TraceContext?

    /// Creates a context. The job runner sets ``phase`` to the phase it runs.
    public init(
        jobID: String = "",
        workerName: String = "",
        phase: IntentPhase = .resolve,
        deadline: ContinuousClock.Instant? = nil,
        idempotencyKey: String? = nil,
        attempt: Int = 1
    ) {
        self.init(
            _jobID: .text(jobID), workerName: workerName, phase: phase, deadline: deadline,
            idempotencyKey: idempotencyKey, attempt: attempt)
    }

    /// Creates a context for a job whose id is `jobID`, the 8 bytes of a JOB's job id frame; ``jobID`` gives them as
    /// lower-case hex, two digits a byte, made when first read (the worker's hot path makes one context per job).
    package init(
        jobIDBytes jobID: UInt64,
        workerName: String,
        phase: IntentPhase,
        deadline: ContinuousClock.Instant?,
        idempotencyKey: String?,
        attempt: Int
    ) {
        self.init(
            _jobID: .bytes(jobID), workerName: workerName, phase: phase, deadline: deadline,
            idempotencyKey: idempotencyKey, attempt: attempt)
    }

    private init(
        _jobID: _JobID, workerName: String, phase: IntentPhase, deadline: ContinuousClock.Instant?,
        idempotencyKey: String?, attempt: Int
    ) {
        self._jobID = _jobID
        self.workerName = workerName
        self.phase = phase
        self.deadline = deadline
        self.idempotencyKey = idempotencyKey
        self.attempt = attempt
    }

    /// Lower-case hex of the 8 bytes of `bytes`, most significant first.
    private static func hex(_ bytes: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: bytes >> (60 - 4 * UInt64(index))) & 0x0F
                buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 16
        }
    }

    /// Creates a context whose deadline is `timeLeft` from now (the broker sends the time left in each JOB).
    public init(jobID: String, workerName: String, phase: IntentPhase, timeLeft: Duration) {
        self.init(jobID: jobID, workerName: workerName, phase: phase, deadline: .now + timeLeft)
    }

    /// The time left until the deadline (negative once it has passed), or nil without a deadline.
    public var timeRemaining: Duration? {
        guard let deadline else { return nil }
        return deadline - .now
    }

    /// The text form of an idempotency key's bytes, as ``idempotencyKey`` gives it: the bytes as a string when they
    /// are valid UTF-8, otherwise `0x` followed by every byte as two lower-case hex digits (`[0xFF, 0x01]` gives
    /// `"0xff01"`). Nil for an empty key (no key).
    ///
    /// Two different keys give two different texts, unless a caller uses both a non-UTF-8 key and, as text, that
    /// key's `0x` spelling.
    public static func idempotencyKey(bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty else { return nil }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = [0x30, 0x78]  // "0x"
        hex.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

/// A job id as text, or as the 8 bytes a JOB carries.
private enum _JobID: Sendable {
    case text(String)
    case bytes(UInt64)
}
