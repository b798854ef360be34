public import ConciergeJSON
public import IntentWire
import Synchronization

/// Conversations (`CIPC03`): a multi-turn intent the broker carries between turns. The client starts one with an
/// intent, then each turn sends only the user's answers; the client numbers the turns itself.
///
/// A turn is retried with its **same number** (after `busy`, `worker-lost`, `timeout`, a lost connection or a
/// restarted broker: ``RetryPolicy/retryableCodes``), under a new request id: the broker attaches the retry to the
/// turn still running, or sends its stored reply again, so a turn never runs handle twice. That is why the
/// conversation calls retry by default (`retry: RetryPolicy()`, 3 attempts); pass nil for one attempt.
///
/// The broker's errors are thrown as ``ClientError`` with the broker's code (``ClientError/Code/notAsked``,
/// ``ClientError/Code/badOption``, ``ClientError/Code/tooManyAsks``, ...), its error reply in
/// ``ClientError/reply`` and the conversation, when the broker names it, in ``ClientError/conversation``.
extension ConciergeClient {
    /// Starts a conversation with `intent` (`{"type": ..., "parameters": {...}}`): turn 1 runs the lifecycle, and
    /// its ending says what the conversation asks (``ConversationTurn/asking``), or how it ended.
    ///
    /// - Parameters:
    ///   - id: the conversation id (1 to 255 bytes of printable ASCII, 0x21-0x7E); default: a new one
    ///     (``makeConversationID()``). Conversations are the client's own: another client cannot read or answer
    ///     them (scoped by CURVE key, else by routing id).
    ///   - flags: ``ConversationFlags/record`` (a transcript), ``ConversationFlags/confirmBeforeHandle`` (wait for
    ///     a yes to the whole intent before handle).
    ///   - deadline: the first-reply deadline of each turn (nil: the broker's).
    ///   - progress: hears the turn's `progress` reply, if the deadline passes before its ending.
    ///   - traceContext: the W3C trace context the turn carries (`CIPC04`); nil: the task's current
    ///     `ServiceContext`'s, if the bootstrapped instrument yields one (``outgoingTraceContext(_:)``).
    public func startConversation(
        intent: JSONValue, id: String? = nil, flags: ConversationFlags = [], deadline: Duration? = nil,
        retry: RetryPolicy? = RetryPolicy(), traceContext: TraceContext? = nil,
        progress: (@Sendable (Reply) -> Void)? = nil
    ) async throws -> ConversationTurn {
        let body = JSONValue.object(["intent": intent]).serialized()
        return try await startConversation(
            intentType: intent["type"]?.stringValue, body: body, id: id, flags: flags, deadline: deadline,
            retry: retry, traceContext: traceContext, progress: progress)
    }

    /// ``startConversation(intent:id:flags:deadline:retry:traceContext:progress:)`` with a raw Interaction body
    /// (`{"intent": {...}}`).
    ///
    /// - Parameter requestID: the request id of the turn's first attempt (default: a new one); each retry gets a new
    ///   one. A caller that names the turn before it ends (the HTTP gateway's `Concierge-Request-Id`) passes it, so
    ///   that STATUS of that id reaches the turn at the broker.
    public func startConversation(
        intentType: String?, body: [UInt8], id: String? = nil, flags: ConversationFlags = [],
        deadline: Duration? = nil, retry: RetryPolicy? = RetryPolicy(), traceContext: TraceContext? = nil,
        requestID: String? = nil, progress: (@Sendable (Reply) -> Void)? = nil
    ) async throws -> ConversationTurn {
        try await turn(
            id ?? Self.makeConversationID(), starting: true, intentType: intentType, body: body, flags: flags,
            deadline: deadline, retry: retry, traceContext: traceContext, requestID: requestID, progress: progress)
    }

    /// Sends `answers` (applied in order) as the next turn of conversation `conversation`; `traceContext` as for
    /// ``startConversation(intent:id:flags:deadline:retry:traceContext:progress:)``, `requestID` as for
    /// ``startConversation(intentType:body:id:flags:deadline:retry:traceContext:requestID:progress:)``.
    public func answer(
        conversation: String, _ answers: [ConversationAnswer], deadline: Duration? = nil,
        retry: RetryPolicy? = RetryPolicy(), traceContext: TraceContext? = nil, requestID: String? = nil,
        progress: (@Sendable (Reply) -> Void)? = nil
    ) async throws -> ConversationTurn {
        guard !answers.isEmpty else {
            throw ClientError(code: .badAnswer, message: "a turn sends at least one answer")
        }
        return try await turn(
            conversation, starting: false, intentType: nil, body: ConversationAnswer.body(answers).serialized(),
            flags: [], deadline: deadline, retry: retry, traceContext: traceContext, requestID: requestID,
            progress: progress)
    }

    /// A value for `parameter` as the next turn.
    public func answer(conversation: String, parameter: String, value: JSONValue) async throws -> ConversationTurn {
        try await answer(conversation: conversation, [.value(parameter: parameter, value)])
    }

    /// Option `option` (from 0) of `parameter`'s disambiguation as the next turn.
    public func choose(conversation: String, parameter: String, option: Int) async throws -> ConversationTurn {
        try await answer(conversation: conversation, [.option(parameter: parameter, index: option)])
    }

    /// Yes or no to `parameter`'s confirmation request as the next turn.
    public func confirm(conversation: String, parameter: String, yes: Bool) async throws -> ConversationTurn {
        try await answer(conversation: conversation, [.confirmParameter(parameter: parameter, yes: yes)])
    }

    /// Yes or no to the whole intent as the next turn (the conversation is ``ConversationState/Phase/confirming``).
    public func confirm(conversation: String, yes: Bool) async throws -> ConversationTurn {
        try await answer(conversation: conversation, [.confirmIntent(yes: yes)])
    }

    /// Reads conversation `id` (`CIPC03 CONVERSATION`): its intent, what it asks, its turn, its ending.
    /// Throws ``ClientError/Code/unknownConversation`` for an id this client has no conversation with.
    public func conversation(_ id: String) async throws -> ConversationState {
        let state = try await conversationCommand(id, end: false)
        ledger.withLock { $0.learned(state) }
        return state
    }

    /// Ends conversation `id` (`CIPC03 END`; ending `cancelled`, a turn in flight is cancelled) and returns it as
    /// it ended. An ended conversation stays readable for the broker's result time to live.
    @discardableResult
    public func endConversation(_ id: String) async throws -> ConversationState {
        let state = try await conversationCommand(id, end: true)
        ledger.withLock { $0.learned(state) }
        return state
    }

    /// A new conversation id: `c-` and a UUID.
    public static func makeConversationID() -> String { "c-" + makeIdempotencyKey() }

    /// Whether `id` is a valid conversation id: 1 to 255 bytes, each printable ASCII (0x21-0x7E).
    public static func isValidConversationID(_ id: String) -> Bool {
        (1...255).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    // MARK: Turns

    private func conversationCommand(_ id: String, end: Bool) async throws -> ConversationState {
        try Self.checkConversationID(id)
        let reply = try await withCheckedThrowingContinuation { continuation in
            core.submit(.conversation(id: id, end: end, continuation: continuation))
        }
        guard reply.status == .final else {
            let error = ClientError(errorReply: reply)
            if error.code == .unknownConversation { ledger.withLock { $0.forget(id) } }
            throw error
        }
        guard let json = reply.json, let state = ConversationState(json: json) else {
            throw ClientError(
                code: .transport,
                message: "conversation \(id): the broker's answer is not a Conversation object: "
                    + String(decoding: reply.body.prefix(200), as: UTF8.self))
        }
        return state
    }

    private static func checkConversationID(_ id: String) throws(ClientError) {
        guard isValidConversationID(id) else {
            throw ClientError(
                code: .badConversationID,
                message: "a conversation id has 1 to 255 bytes of printable ASCII (0x21-0x7E), not \"\(id.prefix(64))\""
            )
        }
    }

    /// Runs one turn: its number from the ledger (reading the conversation first when the last turn's outcome is
    /// unknown), then its attempts, all with that number (the first under `requestID`, if given).
    private func turn(
        _ conversationID: String, starting: Bool, intentType: String?, body: [UInt8], flags: ConversationFlags,
        deadline: Duration?, retry: RetryPolicy?, traceContext: TraceContext?, requestID: String? = nil,
        progress: (@Sendable (Reply) -> Void)?
    ) async throws -> ConversationTurn {
        try Self.checkConversationID(conversationID)
        let trace = Self.outgoingTraceContext(traceContext)
        var plan = try ledger.withLock { ledger throws(ClientError) in
            try ledger.begin(conversationID, starting: starting, intentType: intentType)
        }
        if plan == .read {
            _ = try await conversation(conversationID)
            plan = try ledger.withLock { ledger throws(ClientError) in
                try ledger.begin(conversationID, starting: false)
            }
        }
        guard case .send(let number) = plan else {
            throw ClientError(code: .turnMismatch, message: "conversation \(conversationID): no turn to send")
        }
        var ending: Reply?
        defer { ledger.withLock { $0.ended(conversationID, turn: number, reply: ending) } }
        let throttleKey = intentType ?? ledger.withLock { $0.intentType(of: conversationID) }
        let policy = retry ?? RetryPolicy(maxAttempts: 1)
        var attempt = 1
        while true {
            let result: Result<Reply, ClientError>
            do {
                var reply = try await turnAttempt(
                    conversationID, turn: number, requestID: attempt == 1 ? requestID : nil, body: body, flags: flags,
                    deadline: deadline, throttleKey: throttleKey, traceContext: trace, progress: progress)
                reply.attempts = attempt
                result = .success(reply)
            } catch var error as ClientError {
                error.attempts = attempt
                result = .failure(error)
            }
            let code: String?
            switch result {
            case .success(let reply): code = reply.status == .error ? reply.errorCode : nil
            case .failure(let error): code = error.code.rawValue
            }
            if attempt < policy.maxAttempts, let code, RetryPolicy.isRetryable(code: code) {
                try await Task.sleep(for: policy.backoff(beforeRetry: attempt))
                attempt += 1
                continue
            }
            let reply = try result.get()
            ending = reply
            guard reply.status == .final else { throw ClientError(errorReply: reply) }
            let state = reply.json?["conversation"].flatMap(ConversationState.init(json:))
            return ConversationTurn(
                conversation: Conversation(id: conversationID, client: self), number: number, reply: reply,
                state: state)
        }
    }

    /// One attempt of a turn, under `requestID` or a new request id: its ending reply (final or error).
    private func turnAttempt(
        _ conversationID: String, turn: Int, requestID: String?, body: [UInt8], flags: ConversationFlags,
        deadline: Duration?, throttleKey: String?, traceContext: TraceContext?, progress: (@Sendable (Reply) -> Void)?
    ) async throws -> Reply {
        let id = requestID ?? makeRequestID()
        var message = WireFrameList()
        ClientMessageEncoder.turn(
            into: &message, version: traceContext == nil ? 3 : 4, requestID: id, conversationID: conversationID,
            turn: turn, deadlineMilliseconds: deadline.map(\.milliseconds), body: .bytes(body), flags: flags.wire,
            traceContext: traceContext)
        let (stream, continuation) = ReplyStream.makeStream()
        let core = self.core
        let serial = nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.onTermination = { termination in
            if case .cancelled = termination { core.submit(.abandon(id: id, serial: serial)) }
        }
        core.submit(
            .turn(
                id: id, serial: serial, frames: message.frames, intentType: throttleKey,
                continuation: .stream(continuation)))
        for try await reply in stream {
            if reply.isFinal { return reply }
            progress?(reply)
        }
        try Task.checkCancellation()
        throw ClientError(code: .connectionLost, message: "turn \(turn) of \(conversationID) ended without a reply")
    }
}
