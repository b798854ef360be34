public import ConciergeJSON
public import IntentWire
public import Logging
import Synchronization
import ZeroMQ

/// The Swift client for Concierge: publishes intents to a broker over one DEALER connection with any number of
/// requests in flight, and delivers each request's replies (progress, then final) as they arrive.
///
/// ```swift
/// let client = try ConciergeClient(configuration: .init(brokerEndpoint: "tcp://127.0.0.1:5555"))
/// let intent: JSONValue = ["type": "Echo", "parameters": ["text": "hi"]]
/// for try await reply in client.send(intent: intent, phase: .lifecycle) { print(reply.status, reply.phase) }
/// ```
/// Conversations (``startConversation(intent:id:flags:deadline:retry:traceContext:progress:)``, `CIPC03`) keep a multi-turn
/// intent at the broker: each later turn sends only the user's answers, and the client numbers the turns.
///
/// The socket lives on one thread of its own; the API is safe to use from any task. Given several broker endpoints
/// (``ClientConfiguration/brokerEndpoints``: brokers sharing a PostgreSQL journal, one active), the client is
/// connected to one at a time and follows the active broker: it moves to the next endpoint when its connection
/// does not complete a handshake within a heartbeat interval, when the broker is silent for
/// ``ClientConfiguration/heartbeatLiveness`` intervals, or when a reply is the error `unavailable`. Requests in
/// flight are kept while it looks for a broker, up to ``ClientConfiguration/reconnectTimeout``; then they fail with
/// ``ClientError/Code/connectionLost``. When a connection completes its handshake again (the same broker restarted,
/// or another that took over), the client asks the broker (STATUS) about every request in flight: one it recovered
/// from its journal answers `progress` and its final reply follows (routing is by routing id); those it no longer
/// knows fail with ``ClientError/Code/brokerRestarted``; those it ended while the connection was down get their
/// stored answer.
///
/// Cancellation (PROTOCOL.md 4.10.2): cancelling the Task that iterates ``send(intent:phase:deadline:requestID:idempotencyKey:traceContext:definitionVersion:)``'s
/// stream, or awaits ``request(intent:phase:deadline:requestID:idempotencyKey:retry:traceContext:definitionVersion:events:)``, sends `CIPC02 CANCEL` for
/// the request, so that the broker stops it (a queued request leaves its queue; a running job's handler is asked to
/// stop). The stream ends at once and `request` throws `CancellationError`; the request's ending, when the broker
/// sends it, is dropped. ``cancel(requestID:)`` sends CANCEL and returns that ending instead.
public final class ConciergeClient: Sendable {
    public typealias ReplyStream = AsyncThrowingStream<Reply, any Error>

    enum Command {
        /// Send a request; `serial` is unique per call of ``send(intentType:phase:body:deadline:requestID:idempotencyKey:)``.
        case request(id: String, serial: UInt64, frames: [[UInt8]], continuation: ReplySink)
        case status(id: String, continuation: CheckedContinuation<Reply, any Error>)
        case ping(continuation: CheckedContinuation<Void, any Error>)
        /// The caller of request `serial` stopped listening (its Task was cancelled): send CANCEL, drop the ending.
        case abandon(id: String, serial: UInt64)
        /// ``cancel(requestID:)``: send CANCEL, answer with the request's ending.
        case cancel(id: String, continuation: CheckedContinuation<Reply, any Error>)
        /// Send a conversation's TURN (its frames, kept like a REQUEST's); `intentType` keys the throttle.
        case turn(
            id: String, serial: UInt64, frames: [[UInt8]], intentType: String?,
            continuation: ReplySink)
        /// Read (`CONVERSATION`) or end (`END`) a conversation; answered by the CONVERSATION answer about it.
        case conversation(id: String, end: Bool, continuation: CheckedContinuation<Reply, any Error>)
    }

    let core: ClientCore
    private let nextID = Atomic<UInt64>(1)
    let nextSerial = Atomic<UInt64>(1)
    /// The turn numbers of this client's conversations.
    let ledger = Mutex(ConversationLedger())

    public init(configuration: ClientConfiguration = .init(), logger: Logger = Logger(label: "concierge.client")) throws
    {
        core = try ClientCore(configuration: configuration, logger: logger)
        let core = self.core
        SocketThread.start(name: "concierge-client") { core.run() }
    }

    deinit { core.close() }

    /// Closes the connection; requests in flight fail with ``ClientError/Code/closed``.
    public func close() { core.close() }

    /// Makes a request id unique on this client.
    public func makeRequestID() -> String {
        "r\(nextID.wrappingAdd(1, ordering: .relaxed).oldValue)"
    }

    /// Sends an intent (`{"type": ..., "parameters": {...}}`) for `phase` and streams its replies: at most one
    /// progress reply, then exactly one final or error reply, after which the stream ends.
    ///
    /// With an `idempotencyKey` (1 to 255 bytes, e.g. a UUID; PROTOCOL.md 4.10), sending the same intent again
    /// with the same key never runs it twice: a duplicate in flight gets the first one's replies, a completed one
    /// its stored final reply (``Reply/isReplay``), and the same key with another intent `idempotency-conflict`.
    ///
    /// Cancelling the Task that iterates the stream (or dropping the stream before its end) sends CANCEL for the
    /// request (PROTOCOL.md 4.10.2): the stream ends at once, and the request's ending is dropped when it comes.
    /// Until then the request id stays in flight (another request with it fails with
    /// ``ClientError/Code/duplicateRequest``, as the broker would answer).
    ///
    /// `traceContext` is the W3C trace context the request carries (`CIPC04`, Docs/TRACING.md): without one, the
    /// task's current `ServiceContext` as the bootstrapped instrument injects it (``outgoingTraceContext(_:)``); with
    /// neither, the request carries none.
    ///
    /// `definitionVersion` asks for that version of the intent's definition (PROTOCOL.md 5.18: F3 `Type@N`): every
    /// job runs on a worker serving it or a compatible later one; the broker answers `unknown-intent` when no worker
    /// serves it. Nil: the oldest version served.
    public func send(
        intent: JSONValue,
        phase: RequestPhase = .lifecycle,
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil,
        traceContext: TraceContext? = nil,
        definitionVersion: Int? = nil
    ) -> ReplyStream {
        let type = Self.wireIntentType(intent["type"]?.stringValue ?? "", definitionVersion: definitionVersion)
        let body = JSONValue.object(["intent": intent]).serialized()
        return send(
            intentType: type, phase: phase, body: body, deadline: deadline, requestID: requestID,
            idempotencyKey: idempotencyKey, traceContext: traceContext)
    }

    /// F3 of a REQUEST: the intent type, and `@N` when a definition version is asked for (PROTOCOL.md 5.18).
    public static func wireIntentType(_ type: String, definitionVersion: Int?) -> String {
        definitionVersion.map { "\(type)@\($0)" } ?? type
    }

    /// Sends a raw Interaction body (advanced: e.g. continuing a lifecycle with an earlier round's output).
    /// `intentType` may end with `@N` to ask for version N of its definition (PROTOCOL.md 5.18).
    public func send(
        intentType: String,
        phase: RequestPhase,
        body: [UInt8],
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil,
        traceContext: TraceContext? = nil
    ) -> ReplyStream {
        let id = requestID ?? makeRequestID()
        let frames = Self.requestFrames(
            id: id, intentType: intentType, phase: phase, body: body, deadline: deadline,
            idempotencyKey: idempotencyKey, traceContext: traceContext)
        let (stream, continuation) = ReplyStream.makeStream()
        let core = self.core
        let serial = nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.onTermination = { termination in
            if case .cancelled = termination { core.submit(.abandon(id: id, serial: serial)) }
        }
        core.submit(.request(id: id, serial: serial, frames: frames, continuation: .stream(continuation)))
        return stream
    }

    /// Sends a raw Interaction body, as ``send(intentType:phase:body:deadline:requestID:idempotencyKey:traceContext:)``
    /// does, and hands its replies to `handler` instead of a stream: at most one progress reply, then the final or
    /// error reply, then ``ReplyEvent/ended`` (or ``ReplyEvent/failed(_:)`` when the client gives up).
    ///
    /// For servers that fan replies out themselves (the HTTP gateway): no task and no stream per request.
    /// `handler` runs on the client's socket thread, so it must be short and must not block. Call the returned
    /// ``SentRequest/abandon()`` to stop listening: the client sends CANCEL (PROTOCOL.md 4.10.2) and `handler`
    /// hears nothing more.
    public func send(
        intentType: String,
        phase: RequestPhase,
        body: [UInt8],
        deadline: Duration? = nil,
        requestID: String,
        idempotencyKey: String? = nil,
        traceContext: TraceContext? = nil,
        handler: @escaping @Sendable (ReplyEvent) -> Void
    ) -> SentRequest {
        let frames = Self.requestFrames(
            id: requestID, intentType: intentType, phase: phase, body: body, deadline: deadline,
            idempotencyKey: idempotencyKey, traceContext: traceContext)
        let serial = nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue
        core.submit(.request(id: requestID, serial: serial, frames: frames, continuation: .handler(handler)))
        return SentRequest(core: core, id: requestID, serial: serial)
    }

    /// A REQUEST's frames. A keyed request goes out in version 02 (F7: the key), a traced one in version 04 (F8,
    /// F9); its answers come back in the same version. The frames are kept, to be sent again on the next socket if
    /// they never left this one.
    private static func requestFrames(
        id: String, intentType: String, phase: RequestPhase, body: [UInt8], deadline: Duration?,
        idempotencyKey: String?, traceContext: TraceContext?
    ) -> [[UInt8]] {
        let trace = outgoingTraceContext(traceContext)
        var message = WireFrameList()
        ClientMessageEncoder.request(
            into: &message, version: trace != nil ? 4 : idempotencyKey == nil ? 1 : 2, requestID: id,
            intentType: intentType, phase: phase, deadlineMilliseconds: deadline.map(\.milliseconds),
            body: .bytes(body), idempotencyKey: idempotencyKey.map { Array($0.utf8) }, traceContext: trace)
        return message.frames
    }

    /// Whether the client is connected to a broker now: its connection completed a handshake and the broker has
    /// not gone silent since. False while it looks for one (requests then wait, up to
    /// ``ClientConfiguration/reconnectTimeout``).
    public var isConnected: Bool { core.isConnected }

    /// Sends a request and returns its final (or error) reply, skipping progress.
    ///
    /// With a `retry` policy, an ending that may be temporary (``RetryPolicy/retryableCodes``: `busy`,
    /// `worker-lost`, `timeout`, `unavailable`, ``ClientError/Code/brokerRestarted``,
    /// ``ClientError/Code/connectionLost``) is
    /// retried after the policy's backoff, with the same idempotency key and body and a new request id; without an
    /// `idempotencyKey` one is generated (``makeIdempotencyKey()``), so that no retry runs the intent twice.
    /// ``Reply/attempts`` (or ``ClientError/attempts``) tells how many attempts were made. The policy is a parameter
    /// of the call rather than of ``ClientConfiguration`` because retrying is a decision about one operation: it
    /// adds a key (version 02 on the wire), and it can multiply the call's duration by the attempts and backoffs.
    ///
    /// `events` hears of every attempt, reply (progress included) and backoff as they happen (on the calling task:
    /// keep it short). A `requestID` names the first attempt; retries get ids of their own.
    ///
    /// Cancelling the calling Task sends CANCEL for the attempt in flight (or ends the backoff wait) and throws
    /// `CancellationError`.
    ///
    /// Every attempt carries the same trace context (`traceContext`, else the current `ServiceContext`'s, as
    /// ``send(intent:phase:deadline:requestID:idempotencyKey:traceContext:definitionVersion:)``): retries sit side by side in the
    /// caller's trace.
    ///
    /// `definitionVersion`: as ``send(intent:phase:deadline:requestID:idempotencyKey:traceContext:definitionVersion:)``.
    public func request(
        intent: JSONValue,
        phase: RequestPhase = .lifecycle,
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil,
        retry: RetryPolicy? = nil,
        traceContext: TraceContext? = nil,
        definitionVersion: Int? = nil,
        events: (@Sendable (RequestEvent) -> Void)? = nil
    ) async throws -> Reply {
        let type = Self.wireIntentType(intent["type"]?.stringValue ?? "", definitionVersion: definitionVersion)
        let body = JSONValue.object(["intent": intent]).serialized()
        return try await request(
            intentType: type, phase: phase, body: body, deadline: deadline, requestID: requestID,
            idempotencyKey: idempotencyKey, retry: retry, traceContext: traceContext, events: events)
    }

    /// ``request(intent:phase:deadline:requestID:idempotencyKey:retry:traceContext:definitionVersion:events:)`` with a raw Interaction
    /// body.
    public func request(
        intentType: String,
        phase: RequestPhase,
        body: [UInt8],
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil,
        retry: RetryPolicy? = nil,
        traceContext: TraceContext? = nil,
        events: (@Sendable (RequestEvent) -> Void)? = nil
    ) async throws -> Reply {
        let policy = retry ?? RetryPolicy(maxAttempts: 1)
        let trace = Self.outgoingTraceContext(traceContext)
        let key = idempotencyKey ?? (retry == nil ? nil : Self.makeIdempotencyKey())
        var attempt = 1
        while true {
            let id = attempt == 1 ? (requestID ?? makeRequestID()) : makeRequestID()
            let ending: Result<Reply, ClientError>
            do {
                var last: Reply?
                let replies = send(
                    intentType: intentType, phase: phase, body: body, deadline: deadline, requestID: id,
                    idempotencyKey: key, traceContext: trace)
                // After `send`: a CANCEL for this id, prompted by the event, goes out after the REQUEST.
                events?(.sent(attempt: attempt, requestID: id, idempotencyKey: key))
                for try await var reply in replies {
                    reply.attempts = attempt
                    events?(.reply(reply))
                    if reply.isFinal { last = reply }
                }
                guard let last else {
                    // The stream ends without an ending only when the Task was cancelled.
                    try Task.checkCancellation()
                    throw ClientError(code: .connectionLost, message: "request \(id) ended without a reply")
                }
                ending = .success(last)
            } catch var error as ClientError {
                error.attempts = attempt
                ending = .failure(error)
            }
            let code: String?
            switch ending {
            case .success(let reply): code = reply.status == .error ? reply.errorCode : nil
            case .failure(let error): code = error.code.rawValue
            }
            guard attempt < policy.maxAttempts, let code, RetryPolicy.isRetryable(code: code) else {
                return try ending.get()
            }
            let backoff = policy.backoff(beforeRetry: attempt)
            events?(.retrying(attempt: attempt, code: code, backoff: backoff))
            try await Task.sleep(for: backoff)
            attempt += 1
        }
    }

    /// Asks the broker to stop request `requestID` (`CIPC02 CANCEL`, PROTOCOL.md 4.10.2) and returns the request's
    /// ending: error `cancelled` if it was stopped, or its `final` (or other error) reply if it ended first.
    ///
    /// For a request in flight on this client, that ending is also what the request's stream (or `request` call)
    /// gets. For a request id not in flight on this client, the broker answers as STATUS would (``status(of:)``):
    /// the stored ending of a request that ended, error `unknown-request` if it knows none (or, if it still had a
    /// request with that id in flight for this client's routing id, that request's ending). Throws
    /// ``ClientError/Code/cancelUnsupported`` if the broker does not know CANCEL, ``ClientError/Code/badRequestID``
    /// for an id of no or more than 255 bytes, and the client's errors (``ClientError/Code/connectionLost``, ...).
    /// The wait ends with the request's ending; cancelling the calling Task does not end it.
    public func cancel(requestID: String) async throws -> Reply {
        guard (1...CIP.maxRequestIDLength).contains(requestID.utf8.count) else {
            throw ClientError(code: .badRequestID, message: "a request id has 1 to 255 bytes")
        }
        return try await withCheckedThrowingContinuation { continuation in
            core.submit(.cancel(id: requestID, continuation: continuation))
        }
    }

    /// A random idempotency key, a UUID in its usual text form (36 bytes), as generated for a ``RetryPolicy``
    /// without a caller's key.
    public static func makeIdempotencyKey() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 1
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Asks the broker about a request sent on this connection: progress while it runs, then its stored
    /// final or error reply; error `unknown-request` if the broker does not know it.
    public func status(of requestID: String) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            core.submit(.status(id: requestID, continuation: continuation))
        }
    }

    /// Round trip to the broker.
    public func ping() async throws {
        try await withCheckedThrowingContinuation { continuation in
            core.submit(.ping(continuation: continuation))
        }
    }
}
