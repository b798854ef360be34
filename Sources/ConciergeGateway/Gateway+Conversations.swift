import ConciergeJSON
import HTTPTypes
import Hummingbird
import IntentClient
import IntentWire
import Synchronization
import Tracing

/// `/v1/conversations`: start, answer, read, end (PROTOCOL.md 4.11).
///
/// A turn is answered as `POST /v1/requests` answers a request: it is a tracked request of its own (its id, made by
/// the gateway, is the request id of its first attempt at the broker and its `Concierge-Request-Id`), followed by a
/// task of its own, so it goes on when the caller goes away. The response head waits for the turn's first reply: its
/// ending (201 or 200 with the final Interaction, `Idempotent-Replayed: true` for a stored reply sent again, or a
/// problem), else the progress reply at the deadline (202, `Location: /v1/requests/{id}` to long-poll); with
/// `Accept: text/event-stream`, the events of ``eventStream(_:first:)``. With `--tracing` each turn has a server span
/// named after its route (``GatewayTrace/startTurn(route:requestID:conversationID:intentType:trace:tracing:)``).
extension Gateway {
    func startConversation(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (identity, client) = try authenticate(request)
        guard !draining.load(ordering: .relaxed) else { throw Self.shuttingDown }
        let deadline = try RequestInput.deadline(request)
        let id = request.headers[GatewayHeaders.conversationID] ?? ConciergeClient.makeConversationID()
        guard ConciergeClient.isValidConversationID(id) else {
            throw GatewayProblem(
                code: "bad-conversation-id",
                detail: "a conversation id has 1 to 255 bytes of printable ASCII (no spaces)")
        }
        var flags = try Self.flags(request)
        var json = try await RequestInput.json(request, limit: configuration.maxBodyBytes)
        if var object = json.objectValue {
            for (key, flag) in [("record", ConversationFlags.record), ("confirm", .confirmBeforeHandle)] {
                guard let value = object.removeValue(forKey: key) else { continue }
                guard let on = value.boolValue else {
                    throw GatewayProblem(code: "bad-flags", detail: "\"\(key)\" takes true or false")
                }
                if on { flags.insert(flag) }
            }
            json = .object(object)
        }
        let (interaction, intentType) = try RequestInput.interaction(json)
        try checkPermission(identity, intentType: intentType, phase: .lifecycle)
        // The same Conversation-Id with the same Interaction (serialized with sorted keys: the same JSON however it
        // was written) and flags is the same turn 1: replayed. Another one is the broker's idempotency-conflict.
        let body = interaction.serialized()
        let finalFlags = flags
        return await turn(
            request, identity: identity, client: client, deadline: deadline, conversation: id,
            route: "POST /v1/conversations", intentType: intentType, status: .created
        ) { requestID, trace, progress in
            try await client.startConversation(
                intentType: intentType, body: body, id: id, flags: finalFlags, deadline: deadline,
                traceContext: trace, requestID: requestID, progress: progress)
        }
    }

    func answer(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (identity, client) = try authenticate(request)
        guard !draining.load(ordering: .relaxed) else { throw Self.shuttingDown }
        let id = try RequestInput.pathID(context, code: "bad-conversation-id")
        let deadline = try RequestInput.deadline(request)
        let answers = try Self.answers(try await RequestInput.json(request, limit: configuration.maxBodyBytes))
        return await turn(
            request, identity: identity, client: client, deadline: deadline, conversation: id,
            route: "POST /v1/conversations/{id}/turns", intentType: nil, status: .ok
        ) { requestID, trace, progress in
            try await client.answer(
                conversation: id, answers, deadline: deadline, traceContext: trace, requestID: requestID,
                progress: progress)
        }
    }

    func readConversation(_ request: Request, context: BasicRequestContext, end: Bool) async throws -> Response {
        let (_, client) = try authenticate(request)
        let id = try RequestInput.pathID(context, code: "bad-conversation-id")
        let state = try await brokerCall(requestID: nil) {
            end ? try await client.endConversation(id) : try await client.conversation(id)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json", GatewayHeaders.conversationID: id],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: state.json.serialized())))
    }

    // MARK: Turns

    /// Sends one turn (`send`, given the turn's request id, the trace context to carry and where its progress reply
    /// goes) as a tracked request, and answers the caller as ``submit(_:context:)`` does: `status` (201 for turn 1,
    /// 200 for a later one) with the final reply, 202 with the progress reply, or the event stream.
    private func turn(
        _ request: Request, identity: GatewayIdentity, client: ConciergeClient, deadline: Duration?,
        conversation: String, route: String, intentType: String?, status: HTTPResponse.Status,
        _ send:
            @escaping @Sendable (
                _ requestID: String, _ trace: TraceContext?, _ progress: @escaping @Sendable (Reply) -> Void
            ) async throws -> ConversationTurn
    ) async -> Response {
        let requestID = makeRequestID()
        let (outgoing, span) = GatewayTrace.startTurn(
            route: route, requestID: requestID, conversationID: conversation, intentType: intentType,
            trace: TraceContext.incoming(request.headers), tracing: configuration.tracing)
        let tracked = TrackedRequest(id: requestID, identity: identity)
        table.add(tracked)
        let table = self.table
        // Not a child of this route: the turn goes on when the caller goes away.
        let task = Task {
            do {
                let turn = try await send(requestID, outgoing) { tracked.record($0) }
                span?.attributes["concierge.turn"] = turn.number
                if intentType == nil, let type = turn.state?.intentType {
                    span?.attributes["concierge.intent_type"] = type
                }
                tracked.record(turn.reply)
            } catch let error as ClientError {
                if let reply = error.reply, reply.isFinal {
                    tracked.record(reply)
                } else {
                    tracked.end(.failure(Self.problem(error, requestID: requestID)))
                }
            } catch {
                tracked.end(.failure(GatewayProblem(code: "internal", detail: "\(error)", requestID: requestID)))
            }
            table.ended(tracked)
            GatewayTrace.end(span, outcome: tracked.snapshot.outcome)
        }
        tracked.attach(task)
        // With no broker connected, the turn is answered 503 unavailable at its deadline (and its task cancelled).
        sweeper.watch(tracked, on: client, wait: deadline ?? configuration.defaultDeadline)
        // The head waits for the first reply (at most the deadline), so that it can say whether it is a replay.
        let first = await tracked.firstReply()
        var response: Response
        if RequestInput.wantsEventStream(request) {
            response = eventStream(tracked, first: first)
        } else if case .reply(let reply) = first.ending, reply.status == .final {
            var headers: HTTPFields = [
                .contentType: "application/json", GatewayHeaders.requestID: requestID,
                .location: "/v1/conversations/\(conversation)",
            ]
            if reply.isReplay { headers[GatewayHeaders.replayed] = "true" }
            response = Response(
                status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        } else {
            // Progress (202, Location: /v1/requests/{id}), or a problem.
            response = respond(first, id: requestID)
        }
        response.headers[GatewayHeaders.conversationID] = conversation
        return response
    }

    /// `?record=` and `?confirm=`: `true` or `false`.
    private static func flags(_ request: Request) throws(GatewayProblem) -> ConversationFlags {
        var flags: ConversationFlags = []
        for (key, flag) in [("record", ConversationFlags.record), ("confirm", .confirmBeforeHandle)] {
            guard let text = request.uri.queryParameters[Substring(key)].map(String.init) else { continue }
            switch text {
            case "true", "1": flags.insert(flag)
            case "false", "0": break
            default: throw GatewayProblem(code: "bad-flags", detail: "\(key) takes true or false")
            }
        }
        return flags
    }

    /// An Answer body (PROTOCOL.md 4.11.2): one Answer object, or `{"answers": [...]}`.
    static func answers(_ json: JSONValue) throws(GatewayProblem) -> [ConversationAnswer] {
        if let list = json["answers"]?.arrayValue {
            guard (1...16).contains(list.count) else {
                throw GatewayProblem(code: "bad-answer", detail: "\"answers\" holds 1 to 16 answers")
            }
            var answers: [ConversationAnswer] = []
            for item in list { answers.append(try answer(item)) }
            return answers
        }
        return [try answer(json)]
    }

    private static func answer(_ json: JSONValue) throws(GatewayProblem) -> ConversationAnswer {
        let bad = GatewayProblem(
            code: "bad-answer",
            detail: "an answer is {\"parameter\", \"value\"}, {\"parameter\", \"option\"}, {\"parameter\", "
                + "\"confirm\"} or {\"confirm\"}")
        guard let object = json.objectValue else { throw bad }
        if let parameter = object["parameter"]?.stringValue {
            if let value = object["value"] { return .value(parameter: parameter, value) }
            if let option = object["option"]?.intValue { return .option(parameter: parameter, index: option) }
            if let number = object["option"]?.doubleValue, number >= 0, number.rounded() == number {
                // A whole number past Int's range is no option any disambiguation offers: the broker answers
                // bad-option for it, as for any index out of range (not bad-answer).
                return .option(parameter: parameter, index: Int.max)
            }
            if let yes = object["confirm"]?.boolValue { return .confirmParameter(parameter: parameter, yes: yes) }
            throw bad
        }
        guard object["parameter"] == nil, let yes = object["confirm"]?.boolValue else { throw bad }
        return .confirmIntent(yes: yes)
    }
}
