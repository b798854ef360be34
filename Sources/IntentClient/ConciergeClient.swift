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
/// The socket lives on one thread of its own; the API is safe to use from any task. libzmq reconnects by
/// itself when the broker restarts; requests in flight when the broker goes silent fail with
/// ``ClientError/Code/connectionLost``. When the connection drops and comes back, the client asks the broker
/// (STATUS) about every request in flight: those it no longer knows (a restarted broker) fail with
/// ``ClientError/Code/brokerRestarted``, those it ended while the connection was down get their stored answer.
public final class ConciergeClient: Sendable {
    public typealias ReplyStream = AsyncThrowingStream<Reply, any Error>

    enum Command {
        case request(id: String, frames: [[UInt8]], continuation: ReplyStream.Continuation)
        case status(id: String, continuation: CheckedContinuation<Reply, any Error>)
        case ping(continuation: CheckedContinuation<Void, any Error>)
        case cancel(id: String)
    }

    private let core: ClientCore
    private let nextID = Atomic<UInt64>(1)

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
    public func send(
        intent: JSONValue,
        phase: RequestPhase = .lifecycle,
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil
    ) -> ReplyStream {
        let type = intent["type"]?.stringValue ?? ""
        let body = JSONValue.object(["intent": intent]).serialized()
        return send(
            intentType: type, phase: phase, body: body, deadline: deadline, requestID: requestID,
            idempotencyKey: idempotencyKey)
    }

    /// Sends a raw Interaction body (advanced: e.g. continuing a lifecycle with an earlier round's output).
    public func send(
        intentType: String,
        phase: RequestPhase,
        body: [UInt8],
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil
    ) -> ReplyStream {
        let id = requestID ?? makeRequestID()
        // A keyed request goes out in version 02 (F7: the key); its answers come back in version 02.
        var frames: [[UInt8]] = [
            (idempotencyKey == nil ? CIP.clientSignature : CIP.clientSignatureV2).bytes, CIP.Client.request.bytes,
            Array(id.utf8), Array(intentType.utf8), phase.name.bytes,
            deadline.map { Array(String($0.milliseconds).utf8) } ?? [], body,
        ]
        if let idempotencyKey { frames.append(Array(idempotencyKey.utf8)) }
        let (stream, continuation) = ReplyStream.makeStream()
        let core = self.core
        continuation.onTermination = { termination in
            if case .cancelled = termination { core.submit(.cancel(id: id)) }
        }
        core.submit(.request(id: id, frames: frames, continuation: continuation))
        return stream
    }

    /// Sends a request and returns its final (or error) reply, skipping progress.
    public func request(
        intent: JSONValue,
        phase: RequestPhase = .lifecycle,
        deadline: Duration? = nil,
        requestID: String? = nil,
        idempotencyKey: String? = nil
    ) async throws -> Reply {
        var last: Reply?
        let replies = send(
            intent: intent, phase: phase, deadline: deadline, requestID: requestID, idempotencyKey: idempotencyKey)
        for try await reply in replies {
            last = reply
        }
        guard let last else { throw ClientError(code: .connectionLost, message: "no reply") }
        return last
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
