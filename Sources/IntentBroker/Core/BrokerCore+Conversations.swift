import ConciergeJSON
import IntentWire

/// Conversations (`Schemas/PROTOCOL.md` section 4.11): the broker carries an intent between turns, writes each
/// answer into it, runs the next phase as a request of its own, counts how often each parameter is asked, and ends
/// the conversation at handle, at END, at its bound or when idle past its time to live.
///
/// A turn runs as an ordinary request (admission, queueing, deadlines, progress, cancellation, the journal), linked
/// to its conversation; when it ends (``conversationTurnEnded(_:status:payload:now:)``, called by ``end``) the
/// conversation takes in its output. Only a turn that ends without an error, or in an error after its handle job
/// went out, counts: any other error leaves the conversation as it was, so a retry of the same turn runs again and
/// handle never runs twice.
extension BrokerCore {
    /// A TURN whose frames passed the decoder's checks; `body` is a copy of its body.
    mutating func turn(_ turn: ClientTurn, client: [UInt8], body: [UInt8], identity: [UInt8] = [], now: UInt64) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.turn(turn), client: client, version: turn.version)
        }
        let key = ConversationKey(scope: identity.isEmpty ? client : identity, id: turn.conversationID)
        let requestKey = RequestKey(client: client, id: turn.requestID)
        guard let conversation = conversations[key] else {
            guard turn.turn == 1 else {
                return refuseTurn(
                    turn, client: client, identity: identity, .unknownConversation,
                    "no conversation \"\(key.name)\" belongs to this client: start one with turn 1", now: now)
            }
            return start(turn, key: key, client: client, body: body, identity: identity, now: now)
        }
        if turn.turn == 1, !isFirstTurn(of: conversation, body: body, flags: turn.flags) {
            // The id names one first turn, as an idempotency key names one body (section 4.11.5, check 11b).
            return refuseTurn(
                turn, client: client, identity: identity, .idempotencyConflict,
                "conversation \"\(key.name)\" was started with another turn 1 (another body or flags): start a new "
                    + "conversation with a new id", conversation: conversation, now: now)
        }
        switch conversation.state {
        case .running:
            if turn.turn == conversation.turn, let running = conversation.running, requests[running.request] != nil {
                // The same turn again (a retry on another connection, or after the caller stopped waiting): it gets
                // the turn's ending, never a second job.
                guard requestIDs[requestKey] == nil else {
                    return refuseTurn(
                        turn, client: client, identity: identity, .duplicateRequest,
                        "request id is already in flight on this connection", now: now)
                }
                let deadline = turn.deadlineMilliseconds.map { UInt64($0) * 1_000_000 } ?? settings.defaultDeadline
                attach(requestKey, version: turn.version, deadline: deadline, to: running.request, now: now)
                return
            }
            refuseTurn(
                turn, client: client, identity: identity, .turnMismatch,
                "turn \(conversation.turn) of the conversation is in flight; turn \(turn.turn) cannot run now",
                conversation: conversation, now: now)
        case .ended:
            if turn.turn == conversation.turn, let last = conversation.lastReply {
                return replayTurn(last, to: requestKey, version: turn.version, now: now)
            }
            if turn.turn > conversation.turn {
                return refuseTurn(
                    turn, client: client, identity: identity, .conversationEnded,
                    "the conversation ended (\(conversation.ending?.rawValue ?? "ended")) after turn \(conversation.turn)",
                    conversation: conversation, now: now)
            }
            refuseTurn(
                turn, client: client, identity: identity, .turnMismatch,
                "the conversation's last turn is \(conversation.turn), not \(turn.turn)", conversation: conversation,
                now: now)
        case .asking, .confirming:
            if turn.turn == conversation.turn, let last = conversation.lastReply {
                return replayTurn(last, to: requestKey, version: turn.version, now: now)
            }
            guard turn.turn == conversation.turn + 1 else {
                return refuseTurn(
                    turn, client: client, identity: identity, .turnMismatch,
                    "the conversation's next turn is \(conversation.turn + 1), not \(turn.turn)",
                    conversation: conversation, now: now)
            }
            let plan: Conversation.Plan
            do throws(ConversationRefusal) {
                plan = try conversation.plan(try ConversationAnswer.parse(body))
            } catch {
                return refuseTurn(
                    turn, client: client, identity: identity, error.code, error.message, conversation: conversation,
                    now: now)
            }
            switch plan {
            case .decline:
                decline(key, turn: turn, requestKey: requestKey, body: body, now: now)
            case .resolve(let next):
                run(
                    turn, key: key, phase: .lifecycle, body: next, sent: body, client: client, identity: identity,
                    now: now)
            case .handle(let next):
                run(
                    turn, key: key, phase: .handle, body: next, sent: body, client: client, identity: identity, now: now
                )
            }
        }
    }

    /// CONVERSATION: the conversation as it is now.
    mutating func readConversation(
        id: [UInt8], client: [UInt8], identity: [UInt8] = [], version: UInt8 = 3, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.readConversation(conversationID: id), client: client, version: version)
        }
        let key = ConversationKey(scope: identity.isEmpty ? client : identity, id: id)
        guard let conversation = conversations[key] else {
            return unknownConversation(id, client: client, version: version)
        }
        answerConversation(conversation, to: client, version: version, now: now)
    }

    /// END: the conversation ends `cancelled` (a turn in flight is cancelled as by CANCEL); an ended one is answered
    /// as it is.
    mutating func endConversation(
        id: [UInt8], client: [UInt8], identity: [UInt8] = [], version: UInt8 = 3, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.endConversation(conversationID: id), client: client, version: version)
        }
        let key = ConversationKey(scope: identity.isEmpty ? client : identity, id: id)
        guard var conversation = conversations[key] else {
            return unknownConversation(id, client: client, version: version)
        }
        if conversation.state != .ended {
            let running = conversation.running
            conversation.running = nil
            conversation.cancelledTurn = running?.request
            finish(&conversation, .cancelled, now: now)
            if conversation.recording { finishTranscript(conversation, now: now) }
            journalConversation(key)
            // Its turn in flight, if any, is cancelled (its REPLY says how it ended; the conversation stays
            // cancelled). A handle that finishes first is reported in that REPLY and never runs again.
            if let running, let request = requests[running.request] {
                cancel(client: running.key.client, requestID: running.key.id, identity: request.identity, now: now)
            }
        }
        answerConversation(conversations[key] ?? conversation, to: client, version: version, now: now)
    }

    // MARK: Turns

    /// Turn 1: a new conversation, if the body names an intent type and the bounds have room.
    private mutating func start(
        _ turn: ClientTurn, key: ConversationKey, client: [UInt8], body: [UInt8], identity: [UInt8], now: UInt64
    ) {
        guard let json = try? JSONValue.parse(body), case .object(var interaction) = json,
            case .object(var intent)? = interaction["intent"], case .string(let named)? = intent["type"],
            case let (typeBytes, definitionVersion) = ClientRequest.splitVersion(Array(named.utf8)),
            case let type = String(decoding: typeBytes, as: UTF8.self),
            !type.isEmpty, type.utf8.count <= CIP.maxIntentTypeLength,
            type.utf8.allSatisfy(IntentTypeName.isValidByte)
        else {
            return refuseTurn(
                turn, client: client, identity: identity, .badAnswer,
                "turn 1 takes an Interaction whose \"intent\" has a \"type\" (section 11.3)", now: now)
        }
        guard conversations.hasRoom else {
            return refuseTurn(
                turn, client: client, identity: identity, .busy,
                "the broker carries as many conversations as it may (\(conversations.count)); try again later", now: now
            )
        }
        let intentType = Array(type.utf8)
        let firstTurn = BodyFingerprint(body, seeds: fingerprintSeeds)  // the body as sent
        var body = body
        if definitionVersion != nil {
            // `Type@N` asks for version N (section 5.18); the handlers see the type itself.
            intent["type"] = .string(type)
            interaction["intent"] = .object(intent)
            body = JSONValue.object(interaction).serialized()
        }
        let recording =
            settings.recordsTranscripts && (configuration.recordAllConversations || turn.flags.contains(.record))
        var conversation = Conversation(
            key: key, intentType: intentType, flags: turn.flags, maxAsks: maxAsks(ofType: intentType),
            recording: recording, intent: .object(intent), now: now)
        conversation.firstTurn = firstTurn
        guard
            let id = submit(
                turn, key: key, intentType: intentType, phase: .lifecycle, body: body, client: client,
                identity: identity, definitionVersion: definitionVersion, now: now)
        else { return }
        conversation.running = (id, RequestKey(client: client, id: turn.requestID))
        conversation.pin = requests[id]?.pin
        conversations.store(conversation)
        recordStart(conversation)
        recordTurn(turn, conversation, sent: json, now: now)
        journalConversation(key)
    }

    /// A later turn whose answers were written into the intent: its request runs `phase` on `body`.
    private mutating func run(
        _ turn: ClientTurn, key: ConversationKey, phase: RequestPhase, body: [UInt8], sent: [UInt8],
        client: [UInt8], identity: [UInt8], now: UInt64
    ) {
        guard let conversation = conversations[key],
            let id = submit(
                turn, key: key, intentType: conversation.intentType, phase: phase, body: body, client: client,
                identity: identity, now: now)
        else { return }
        conversations.update(key) {
            $0.stateBeforeTurn = $0.state
            $0.state = .running
            $0.turn = turn.turn
            $0.running = (id, RequestKey(client: client, id: turn.requestID))
        }
        if let updated = conversations[key] {
            recordTurn(turn, updated, sent: (try? JSONValue.parse(sent)) ?? .null, now: now)
        }
        journalConversation(key)
    }

    /// The turn's request, through the same admission as a REQUEST's (section 4.8); returns its id when accepted (a
    /// refusal was answered).
    private mutating func submit(
        _ turn: ClientTurn, key: ConversationKey, intentType: [UInt8], phase: RequestPhase, body: [UInt8],
        client: [UInt8], identity: [UInt8], definitionVersion: Int? = nil, now: UInt64
    ) -> RequestID? {
        guard let stored = Self.makeBody(body) else {
            refuseTurn(
                turn, client: client, identity: identity, .internal, "the broker could not keep the turn's body",
                now: now)
            return nil
        }
        let decoded = ClientRequest(
            requestID: turn.requestID, intentType: intentType, phase: phase,
            deadlineMilliseconds: turn.deadlineMilliseconds, bodySize: body.count, idempotencyKey: nil,
            version: turn.version, traceContext: turn.traceContext, definitionVersion: definitionVersion)
        let id = nextRequestID
        let link = TurnLink(
            conversation: key,
            stopsAtReadyConfirm: conversations[key]?.flags.contains(.confirm) ?? turn.flags.contains(.confirm))
        request(decoded, client: client, body: stored, identity: identity, turn: link, now: now)
        guard let request = requests[id], request.conversation == key else { return nil }
        return id
    }

    /// `{"confirm": false}` while confirming: the conversation ends `declined`, answered at once with the confirm
    /// output it declined.
    private mutating func decline(
        _ key: ConversationKey, turn: ClientTurn, requestKey: RequestKey, body: [UInt8], now: UInt64
    ) {
        guard var conversation = conversations[key] else { return }
        conversation.turn = turn.turn
        recordTurn(turn, conversation, sent: (try? JSONValue.parse(body)) ?? .null, now: now)
        let output = conversation.confirmOutput ?? JSONValue.object([:]).serialized()
        finish(&conversation, .declined, now: now)
        let reply = decorated(output, conversation, now: now)
        conversations.update(key) { $0.lastReply = .init(isError: false, phase: .confirm, body: reply) }
        if let stored = conversations[key] {
            recordReply(stored, isError: false, phase: .confirm, body: reply)
            if stored.recording { finishTranscript(stored, now: now) }
        }
        journalConversation(key)
        statistics.finalReplies += 1
        let result = ResultStore<Body>.Result(isError: false, phase: RequestPhase.confirm.name, payload: .bytes(reply))
        results.store(result, for: requestKey, now: now)  // STATUS of the turn's request id answers it too
        if journaling { journal.append(.stored(result, key: requestKey, version: turn.version, at: now)) }
        actions.append(
            .reply(
                ClientReply(
                    client: requestKey.client, command: .reply, requestID: requestKey.id, status: .final,
                    phase: RequestPhase.confirm.name, payload: .bytes(reply), version: turn.version)))
    }

    /// What a conversation turn's request ended with: the conversation takes it in, and the reply carries the
    /// conversation's state (a resolve output past the re-prompt bound becomes a `too-many-asks` error). Called by
    /// ``end`` before it sends the ending.
    mutating func conversationTurnEnded(
        _ request: BrokerRequest<Body>, status: ClientReply<Body>.Status, payload: ReplyPayload<Body>, now: UInt64
    ) -> (ClientReply<Body>.Status, ReplyPayload<Body>) {
        guard let key = request.conversation, var conversation = conversations[key] else { return (status, payload) }
        let bytes = Self.bytes(of: payload)
        guard conversation.running?.request == request.id else {
            // Ended meanwhile (END): the reply says so, and is what a retry of the turn gets; the conversation stays
            // cancelled.
            let reply = decorated(bytes, conversation, now: now)
            if conversation.cancelledTurn == request.id {
                conversation.cancelledTurn = nil
                conversation.lastReply = .init(isError: status == .error, phase: request.phase, body: reply)
                conversations.store(conversation)
                journalConversation(key)
            }
            return (status, .bytes(reply))
        }
        conversation.running = nil
        if conversation.lastReply == nil {
            // The first turn that counts starts the conversation for the counters.
            statistics.conversationsStarted += 1
            metrics?.conversationStarted(intent: conversationLabel(conversation.intentType))
        }
        let output = (try? JSONValue.parse(bytes))?.objectValue
        var status = status
        var reply: [UInt8]
        if status == .error {
            guard request.handleSent else {
                // Before handle: nothing happened that a retry must not repeat, so the conversation is as it was.
                if conversation.lastReply == nil {
                    // A first turn: no conversation is left (it never started).
                    conversations.remove(key)
                    if journaling { journal.append(.conversationRemoved(key)) }
                    discardTranscript(conversation)
                    return (status, payload)
                }
                conversation.turn -= 1
                conversation.state = conversation.stateBeforeTurn
                conversation.idleSince = now
                conversations.store(conversation)
                journalConversation(key)
                return (status, .bytes(decorated(bytes, conversation, now: now)))
            }
            conversation.endingCode = output?["code"]?.stringValue ?? "internal"
            finish(&conversation, .failed, now: now)
            reply = decorated(bytes, parsed: output, conversation, now: now)
        } else {
            if case .object(let intent)? = output?["intent"] { conversation.intent = .object(intent) }
            conversation.idleSince = now
            switch request.phase {
            case .handle, .lifecycle:
                finish(&conversation, .completed, now: now)
            case .confirm:
                if request.stopsAtReadyConfirm, output?["confirm"]?["code"]?.stringValue == "ready" {
                    conversation.state = .confirming
                    conversation.confirmOutput = bytes
                    conversation.asking = []
                } else {
                    finish(&conversation, .refused, now: now)
                }
            case .resolve:
                let asked = Conversation.askedParameters(
                    inResolve: output?["resolve"]?.objectValue ?? [:], order: definedParameters(of: request))
                conversation.asking = asked
                conversation.confirmOutput = nil
                conversation.state = .asking
                var overBound: String?
                for parameter in asked.map(\.parameter) {
                    if conversation.countAsk(parameter) > conversation.maxAsks {
                        overBound = overBound ?? parameter
                    } else {
                        metrics?.conversationAsked(
                            intent: conversationLabel(conversation.intentType), parameter: parameter)
                    }
                }
                if let parameter = overBound {
                    conversation.endingParameter = parameter
                    finish(&conversation, .tooManyAsks, now: now)
                    status = .error
                    var body: JSONObject = [
                        "code": .string(WireErrorCode.tooManyAsks.rawValue),
                        "message": .string(
                            "\(parameter) would be asked a \(Self.ordinal(conversation.maxAsks + 1)) time; the "
                                + "conversation ended (at most \(conversation.maxAsks) asks per parameter)"),
                        "intent": .string(conversation.intentTypeName), "parameter": .string(parameter),
                    ]
                    body["conversation"] = conversation.json(includingIntent: false, ttl: conversations.ttl, now: now)
                    reply = JSONValue.object(body).serialized()
                    conversation.lastReply = .init(isError: true, phase: .resolve, body: reply)
                    return commitTurn(conversation, request, status: status, reply: reply, now: now)
                }
            }
            reply = decorated(bytes, parsed: output, conversation, now: now)
        }
        conversation.lastReply = .init(isError: status == .error, phase: request.phase, body: reply)
        return commitTurn(conversation, request, status: status, reply: reply, now: now)
    }

    /// Stores the conversation after a turn that counted, records it, and gives the reply to send.
    private mutating func commitTurn(
        _ conversation: Conversation, _ request: BrokerRequest<Body>, status: ClientReply<Body>.Status,
        reply: [UInt8], now: UInt64
    ) -> (ClientReply<Body>.Status, ReplyPayload<Body>) {
        conversations.store(conversation)
        recordReply(
            conversation, isError: status == .error, phase: request.phase, body: reply,
            elapsed: now &- request.arrival)
        if conversation.state == .ended, conversation.recording { finishTranscript(conversation, now: now) }
        journalConversation(conversation.key)
        return (status, .bytes(reply))
    }

    // MARK: Time

    /// Ends the conversations idle past their time to live (`expired`) and forgets ended ones kept past the result
    /// TTL. Called with the heartbeat.
    mutating func expireConversations(now: UInt64) {
        guard conversations.count > 0 else { return }
        let (expired, forgotten) = conversations.due(now: now)
        for key in expired {
            guard var conversation = conversations[key] else { continue }
            finish(&conversation, .expired, now: now)
            if conversation.recording { finishTranscript(conversation, now: now) }
            journalConversation(key)
        }
        for key in forgotten {
            conversations.remove(key)
            if journaling { journal.append(.conversationRemoved(key)) }
        }
    }

    // MARK: Helpers

    /// Whether a turn 1 sent again is the conversation's own: the same body, byte for byte (by its fingerprint), and
    /// the same flags (section 4.11.5). A conversation with no fingerprint (journaled before the broker kept one)
    /// takes any.
    private func isFirstTurn(of conversation: Conversation, body: [UInt8], flags: ClientTurn.Flags) -> Bool {
        guard let first = conversation.firstTurn else { return true }
        return conversation.flags == flags && first == BodyFingerprint(body, seeds: fingerprintSeeds)
    }

    /// Ends `conversation` with `ending` (stored), counted in statistics and metrics.
    private mutating func finish(_ conversation: inout Conversation, _ ending: Conversation.Ending, now: UInt64) {
        conversation.state = .ended
        conversation.ending = ending
        conversation.endedAt = now
        conversation.asking = []
        conversation.confirmOutput = nil
        conversations.store(conversation)
        statistics.conversationsEnded += 1
        metrics?.conversationEnded(
            intent: conversationLabel(conversation.intentType), ending: ending.rawValue, turns: conversation.turn)
    }

    /// `body` with the key `"conversation"` (the Conversation object without the intent) added, when it is an object.
    private func decorated(_ body: [UInt8], _ conversation: Conversation, now: UInt64) -> [UInt8] {
        decorated(body, parsed: (try? JSONValue.parse(body))?.objectValue, conversation, now: now)
    }

    /// ``decorated(_:_:now:)`` of a body parsed already (`parsed`, nil when it is not an object).
    private func decorated(_ body: [UInt8], parsed: JSONObject?, _ conversation: Conversation, now: UInt64) -> [UInt8] {
        guard var object = parsed else { return body }
        object["conversation"] = conversation.json(includingIntent: false, ttl: conversations.ttl, now: now)
        return JSONValue.object(object).serialized()
    }

    /// The stored reply of the turn, sent again (flagged `replay`).
    private mutating func replayTurn(
        _ last: Conversation.StoredReply, to key: RequestKey, version: UInt8, now: UInt64
    ) {
        statistics.replays += 1
        let result = ResultStore<Body>.Result(
            isError: last.isError, phase: last.phase?.name ?? "", payload: .bytes(last.body))
        results.store(result, for: key, now: now)  // STATUS of the retry's request id answers it too
        if journaling { journal.append(.stored(result, key: key, version: version, at: now)) }
        actions.append(
            .reply(
                ClientReply(
                    client: key.client, command: .reply, requestID: key.id, status: last.isError ? .error : .final,
                    phase: last.phase?.name ?? "", payload: .bytes(last.body), isReplay: true, version: version)))
    }

    /// A refused turn: an error REPLY (with the conversation's state when there is one); nothing changes.
    private mutating func refuseTurn(
        _ turn: ClientTurn, client: [UInt8], identity: [UInt8], _ code: WireErrorCode, _ message: String,
        conversation: Conversation? = nil, now: UInt64
    ) {
        if settings.auditing {
            audit(
                .refused, key: RequestKey(client: client, id: turn.requestID), identity: identity,
                intentType: conversation?.intentType ?? [], phase: nil, outcome: code.rawValue, now: now)
        }
        var body = WireBody.error(code, message)
        if let conversation { body = decorated(body, conversation, now: now) }
        statistics.refusedTurns += 1
        reject(client: client, requestID: turn.requestID, phase: "", version: turn.version, code, body: body)
    }

    private mutating func unknownConversation(_ id: [UInt8], client: [UInt8], version: UInt8) {
        let name = String(decoding: id, as: UTF8.self)
        reject(
            client: client, requestID: id, phase: "", version: version, .unknownConversation,
            "no conversation \"\(name)\" belongs to this client", command: .conversation)
    }

    private mutating func answerConversation(
        _ conversation: Conversation, to client: [UInt8], version: UInt8, now: UInt64
    ) {
        actions.append(
            .reply(
                ClientReply(
                    client: client, command: .conversation, requestID: conversation.key.id, status: .final,
                    phase: "",
                    payload: .bytes(
                        conversation.json(includingIntent: true, ttl: conversations.ttl, now: now).serialized()),
                    version: version)))
    }

    /// The parameter names of the definition the request's intent type is served under (section 5.16), in the
    /// definition's order: the one its worker announced, else the first served; empty when none is (workers before
    /// `CIPW04`).
    private func definedParameters(of request: BrokerRequest<Body>) -> [String] {
        let served = intentTypes[request.intentType].definitions
        var definition = served.first?.definition
        if case .running(let worker, _) = request.state,
            let digest = workers[worker]?.definitionDigests[request.intentType],
            let own = served.first(where: { $0.definition.digest == digest })
        {
            definition = own.definition
        }
        return definition?.json["parameters"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    /// The definition's `maxAsks` (section 11.11) of a served type, else the broker's.
    private func maxAsks(ofType name: [UInt8]) -> Int {
        if let type = intentTypeIndex[ByteKey(name)],
            let value = intentTypes[type].definitions.first?.definition.json["maxAsks"]?.intValue,
            (1...100).contains(value)
        {
            return value
        }
        return configuration.conversationMaxAsks
    }

    private mutating func conversationLabel(_ name: [UInt8]) -> String {
        metricsLabel(ofType: intentTypeIndex[ByteKey(name)])
    }

    /// Queues the conversation's current state for the journal (or its removal when it is gone).
    mutating func journalConversation(_ key: ConversationKey) {
        guard journaling else { return }
        if let conversation = conversations[key] {
            journal.append(.conversation(key, conversation.journalDocument()))
        } else {
            journal.append(.conversationRemoved(key))
        }
    }

    static func flagWords(_ flags: ClientTurn.Flags) -> [String] {
        String(decoding: flags.frame, as: UTF8.self).split(separator: " ").map(String.init)
    }

    static func ordinal(_ number: Int) -> String {
        switch number {
        case 1: "first"
        case 2: "second"
        case 3: "third"
        default: "\(number)th"
        }
    }

    /// A body of the core's type holding `bytes` (the shell's libzmq message, or bytes in tests).
    static func makeBody(_ bytes: [UInt8]) -> Body? {
        guard let type = Body.self as? any StoredBody.Type else { return nil }
        return type.make(storedBytes: bytes) as? Body
    }

    /// The bytes of a reply's body.
    static func bytes(of payload: ReplyPayload<Body>) -> [UInt8] {
        switch payload {
        case .bytes(let bytes): bytes
        case .body(let body): (body as? any StoredBody)?.storedBytes ?? []
        }
    }
}

/// What links a turn's request to its conversation.
struct TurnLink {
    let conversation: ConversationKey
    /// The conversation was started with the `confirm` flag: a confirm that answers `ready` ends the turn.
    let stopsAtReadyConfirm: Bool
}
