/// Where the client delivers one request's replies: the stream its caller iterates, or a handler called on the
/// socket thread (``ConciergeClient/send(intentType:phase:body:deadline:requestID:idempotencyKey:traceContext:handler:)``).
enum ReplySink: Sendable {
    case stream(ConciergeClient.ReplyStream.Continuation)
    case handler(@Sendable (ReplyEvent) -> Void)

    func yield(_ reply: Reply) {
        switch self {
        case .stream(let continuation): continuation.yield(reply)
        case .handler(let handler): handler(.reply(reply))
        }
    }

    func finish(throwing error: ClientError?) {
        switch self {
        case .stream(let continuation):
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        case .handler(let handler): handler(error.map { .failed($0) } ?? .ended)
        }
    }
}

/// What a request's handler hears (``ConciergeClient/send(intentType:phase:body:deadline:requestID:idempotencyKey:traceContext:handler:)``).
public enum ReplyEvent: Sendable {
    /// A reply: progress, or the ending (final or error).
    case reply(Reply)
    /// The request's replies are over (after its ending).
    case ended
    /// The client gave up on the request (connection lost, closed, throttled, ...): no ending will come.
    case failed(ClientError)
}

/// A request sent with a handler: ``abandon()`` stops it.
public struct SentRequest: Sendable {
    let core: ClientCore
    /// The request id.
    public let id: String
    let serial: UInt64

    /// Stop listening: the client sends CANCEL for the request (PROTOCOL.md 4.10.2) and drops whatever else comes
    /// for it; the handler hears nothing more.
    public func abandon() { core.submit(.abandon(id: id, serial: serial)) }
}
