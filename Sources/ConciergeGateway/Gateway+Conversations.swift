import ConciergeJSON
import HTTPTypes
import Hummingbird
import IntentClient
import IntentWire
import Synchronization

/// `/v1/conversations`: start, answer, read, end (PROTOCOL.md 4.11). Each call waits for the turn's ending. A turn
/// carries the caller's `traceparent`/`tracestate` as a request does (no span of the gateway's own).
extension Gateway {
    func startConversation(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (identity, client) = try authenticate(request)
        guard !draining.load(ordering: .relaxed) else {
            throw GatewayProblem(code: "shutting-down", detail: "the gateway is shutting down")
        }
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
        do {
            let turn = try await client.startConversation(
                intentType: intentType, body: interaction.serialized(), id: id, flags: flags, deadline: deadline,
                traceContext: TraceContext.incoming(request.headers))
            return Self.respond(turn, status: .created)
        } catch let error as ClientError {
            throw Self.problem(error, requestID: error.reply?.requestID)
        }
    }

    func answer(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (_, client) = try authenticate(request)
        let id = try RequestInput.pathID(context, code: "bad-conversation-id")
        let deadline = try RequestInput.deadline(request)
        let answers = try Self.answers(try await RequestInput.json(request, limit: configuration.maxBodyBytes))
        do {
            let turn = try await client.answer(
                conversation: id, answers, deadline: deadline,
                traceContext: TraceContext.incoming(request.headers))
            return Self.respond(turn, status: .ok)
        } catch let error as ClientError {
            throw Self.problem(error, requestID: error.reply?.requestID)
        }
    }

    func readConversation(_ request: Request, context: BasicRequestContext, end: Bool) async throws -> Response {
        let (_, client) = try authenticate(request)
        let id = try RequestInput.pathID(context, code: "bad-conversation-id")
        do {
            let state = end ? try await client.endConversation(id) : try await client.conversation(id)
            return Response(
                status: .ok, headers: [.contentType: "application/json", GatewayHeaders.conversationID: id],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: state.json.serialized())))
        } catch let error as ClientError {
            throw Self.problem(error, requestID: nil)
        }
    }

    private static func respond(_ turn: ConversationTurn, status: HTTPResponse.Status) -> Response {
        var headers: HTTPFields = [
            .contentType: "application/json", GatewayHeaders.conversationID: turn.conversation.id,
            GatewayHeaders.requestID: turn.reply.requestID, .location: "/v1/conversations/\(turn.conversation.id)",
        ]
        if turn.reply.isReplay { headers[GatewayHeaders.replayed] = "true" }
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: turn.reply.body)))
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
