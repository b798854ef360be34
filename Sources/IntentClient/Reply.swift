public import ConciergeJSON
import IntentWire

/// One reply from the broker to a request or a status query.
public struct Reply: Sendable, Hashable {
    /// What kind of reply this is.
    public enum Status: String, Sendable, Hashable {
        /// The request's answer: an Interaction (intent plus the phases' results).
        case final
        /// The deadline passed and the work goes on; a final or error reply follows.
        case progress
        /// The request failed; the body is `{"code", "message"}`.
        case error
    }

    public let requestID: String
    public let status: Status
    /// The phase that produced the reply (or the phase running, for progress).
    public let phase: String
    /// The JSON body as sent.
    public let body: [UInt8]
    /// The broker sent the stored final reply of the request's idempotency key again (the request did not run:
    /// an earlier one with the same key and body did).
    public let isReplay: Bool
    /// How many attempts ``ConciergeClient/request(intent:phase:deadline:requestID:idempotencyKey:retry:traceContext:definitionVersion:events:)`` made to
    /// get this reply (1 without a ``RetryPolicy``, or when the first attempt was answered); for a reply of one
    /// attempt of a retried request, the number of that attempt. `requestID` is the id of that attempt.
    public internal(set) var attempts: Int

    public init(
        requestID: String, status: Status, phase: String, body: [UInt8], isReplay: Bool = false, attempts: Int = 1
    ) {
        self.requestID = requestID
        self.status = status
        self.phase = phase
        self.body = body
        self.isReplay = isReplay
        self.attempts = attempts
    }

    /// Whether this reply ends the request.
    public var isFinal: Bool { status != .progress }

    /// The body parsed as JSON (nil if it is not valid JSON).
    public var json: JSONValue? { try? JSONValue.parse(body) }

    /// For error replies, the stable error code.
    public var errorCode: String? { status == .error ? json?["code"]?.stringValue : nil }
}

extension Reply {
    /// A REPLY or STATUS answer as decoded, its frames copied.
    init(_ reply: BrokerReply) {
        let status: Status =
            switch reply.status {
            case .final: .final
            case .progress: .progress
            case .error: .error
            }
        self.init(
            requestID: String(decoding: reply.requestID, as: UTF8.self), status: status,
            phase: String(decoding: reply.phase, as: UTF8.self), body: Array(reply.body), isReplay: reply.isReplay)
    }
}
