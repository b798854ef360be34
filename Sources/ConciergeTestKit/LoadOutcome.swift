public import IntentClient

/// What became of one request a process test sent under load (issue 45): the broker's answer, the broker's refusal
/// (`busy`: the standing-queue rule or the deadline check shed it, PROTOCOL.md 6.3), or nothing sent (the client's
/// pushback or throttle refused it, ``ClientError/Code/throttled``). A refusal and an unsent request are outcomes of
/// load that a test counts: neither is a lost job. Any other error is rethrown by ``of(_:)``.
public enum LoadOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The broker answered (final, or an error other than `busy`).
    case answered(Reply)
    /// The broker refused it with `busy`.
    case refused
    /// The client did not send it (`throttled`).
    case notSent

    /// Runs `request` and classifies its outcome; errors other than the client's `throttled` are rethrown.
    public static func of(_ request: () async throws -> Reply) async throws -> LoadOutcome {
        do {
            let reply = try await request()
            return reply.errorCode == "busy" ? .refused : .answered(reply)
        } catch let error as ClientError where error.code == .throttled {
            return .notSent
        }
    }

    /// The reply, when the broker answered.
    public var reply: Reply? {
        if case .answered(let reply) = self { return reply }
        return nil
    }

    /// `final`, `error <code>`, `refused (busy)` or `not sent (throttled)`.
    public var description: String {
        switch self {
        case .answered(let reply): reply.status == .final ? "final" : "\(reply.status) \(reply.errorCode ?? "")"
        case .refused: "refused (busy)"
        case .notSent: "not sent (throttled)"
        }
    }
}
