import IntentWire
import Logging

/// Clients: acceptance and shedding (section 4.8, checks 11-15), STATUS (6.4) and PING.
extension BrokerCore {
    /// A message that failed checks 1-10 of section 4.8: answered with the check's error, nothing else changes.
    mutating func clientMessageRejected(
        client: [UInt8], _ error: ClientMessageError, version: UInt8 = 1, now: UInt64
    ) {
        statistics.malformedClientMessages += 1
        warn(
            .malformedClientMessage, peer: client, "malformed message from a client",
            ["code": "\(error.code)", "error": "\(error.message)"], now: now)
        reject(
            client: client, requestID: error.requestID, phase: error.phaseFrame, version: version, error.code,
            error.message,
            command: error.answer == .status ? .status : error.answer == .conversation ? .conversation : .reply)
    }

    /// PING: answer PONG.
    mutating func ping(client: [UInt8], version: UInt8 = 1) {
        actions.append(.pong(client: client, version: version))
    }

    /// A REQUEST whose frames passed checks 1-10: checks 11-15, then acceptance (dispatch or queue).
    ///
    /// A request with an idempotency key (handle or lifecycle) is first checked against the key's record
    /// (`Docs/IDEMPOTENCY.md`): it may attach to the request in flight, get the stored reply again, or be refused.
    /// `fingerprint` is its body's (needed with a key); `identity` is the client's (its CURVE key and the scope its
    /// routing id names, PROTOCOL.md 3.4; empty for the scope all clients share without either).
    mutating func request(
        _ decoded: ClientRequest, client: [UInt8], body: Body, fingerprint: BodyFingerprint? = nil,
        identity: [UInt8] = [], turn: TurnLink? = nil, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.request(decoded), client: client, version: decoded.version)
        }
        let key = RequestKey(client: client, id: decoded.requestID)
        let deadline = decoded.deadlineMilliseconds.map { UInt64($0) * 1_000_000 } ?? settings.defaultDeadline
        let admission = admit(
            decoded, key: key, fingerprint: fingerprint, identity: identity, deadline: deadline, now: now)
        if settings.auditing {
            let outcome =
                switch admission {
                case .refuse(let code, _, _): code.rawValue
                case .attach: "attached"
                case .replay: "replayed"
                case .accept: "accepted"
                }
            audit(
                admission.isRefusal ? .refused : .accepted, key: key, identity: identity,
                intentType: decoded.intentType, phase: decoded.phase, outcome: outcome, now: now)
        }
        switch admission {
        case .refuse(let code, let body, let type):
            reject(
                client: client, requestID: decoded.requestID, phase: decoded.phase.name, version: decoded.version,
                code, body: body, intentType: type)
        case .attach(let first):
            attach(key, version: decoded.version, deadline: deadline, to: first, now: now)
        case .replay(let scope):
            if settings.tracing { actions.append(.trace(.replayed(decoded))) }
            replay(scope, to: key, version: decoded.version, now: now)
        case .accept(let type, let scope, let attempt):
            accept(
                decoded, key: key, type: type, body: body, scope: scope, attempt: attempt, identity: identity,
                turn: turn, deadline: deadline, now: now)
        }
    }

    /// What becomes of a REQUEST: checks 11–15 of section 4.8 in their order, then its idempotency key (section
    /// 4.10.1), then shedding at arrival (section 6.3). Only the key's record changes here.
    private mutating func admit(
        _ decoded: ClientRequest, key: RequestKey, fingerprint: BodyFingerprint?, identity: [UInt8], deadline: UInt64,
        now: UInt64
    ) -> Admission {
        guard !isShuttingDown else { return .refuse(.shuttingDown, "the broker is shutting down") }
        // Before anything else: a type the sender may not send is not told apart from one no worker serves. The key
        // alone decides, whatever scope the client is in (PROTOCOL.md 3.4).
        if let refused = permissions?.refusal(
            toSend: decoded.intentType, phase: decoded.phase, key: ClientScope.key(ofIdentity: identity))
        {
            forbidden(refused, .send, peer: key.client, intentType: decoded.intentType, phase: decoded.phase, now: now)
            return .refuse(.forbidden, refused.message)
        }
        guard requestIDs[key] == nil else {
            return .refuse(.duplicateRequest, "request id is already in flight on this connection")
        }
        guard let type = servedType(decoded.intentType, now: now) else {
            let name = decoded.intentType.withUnsafeBytes { WireText.display($0) }
            return .refuse(.unknownIntent, "no worker serves intent type \"\(name)\"")
        }
        if decoded.definitionVersion != nil,
            case .failure(let refusal) = admissionPin(
                for: type, asked: decoded.definitionVersion)
        {
            return .refuse(.unknownIntent, refusal.message)
        }
        var scope: IdempotencyScope?
        var attempt = 1
        if let idempotencyKey = decoded.idempotencyKey, decoded.phase == .handle || decoded.phase == .lifecycle {
            let keyed = IdempotencyScope(identity: identity, intentType: decoded.intentType, key: idempotencyKey)
            switch idempotency.admit(keyed, fingerprint: fingerprint ?? BodyFingerprint([]), request: nextRequestID) {
            case .run(let number):
                scope = keyed
                attempt = number
            case .attach(let first):
                return .attach(to: first)
            case .replay:
                return .replay(keyed)
            case .conflict:
                return .refuse(
                    .idempotencyConflict, "the idempotency key was first used with another body", intentType: type)
            case .earlierAttemptMayBeRunning:
                return .refuse(
                    .busy, "an earlier attempt with this idempotency key may still be running on a worker",
                    intentType: type)
            }
        }
        if !intentTypes[type].queue.isEmpty || !anyWorkerHasRoom(for: type) {
            let lane = BrokerRequest<Body>.lane(identity: identity, client: key.client)
            if let refusal = admissionRefusal(type: type, deadline: deadline, client: lane, now: now) {
                if let scope { idempotency.forget(scope, now: now) }
                return .refuse(.busy, body: refusal, intentType: type)
            }
        }
        return .accept(type: type, scope: scope, attempt: attempt)
    }

    /// An admitted REQUEST becomes a request in flight: recorded, timed and dispatched (or queued).
    private mutating func accept(
        _ decoded: ClientRequest, key: RequestKey, type: Int, body: Body, scope: IdempotencyScope?, attempt: Int,
        identity: [UInt8], turn: TurnLink?, deadline: UInt64, now: UInt64
    ) {
        let id = nextRequestID
        nextRequestID &+= 1
        let request = BrokerRequest(
            id: id, key: key, intentType: type, requested: decoded.phase, phase: decoded.phase.firstJob, body: body,
            arrival: now, deadline: now + deadline, state: .queued(ticket: 0))
        request.bodySize = decoded.bodySize
        request.version = decoded.version
        request.idempotency = scope
        request.attempt = attempt
        request.identity = identity
        request.traceContext = decoded.traceContext
        if settings.tracing {
            actions.append(
                .trace(
                    .started(
                        id, requestID: decoded.requestID, intentType: decoded.intentType, phase: decoded.phase,
                        parent: decoded.traceContext)))
        }
        // Section 5.18: a turn runs under its conversation's definition; a request under the one it asked for, else
        // the oldest served.
        if let turn, let conversation = conversations[turn.conversation] {
            request.pin = conversation.pin
        } else if case .success(let pin) = admissionPin(for: type, asked: decoded.definitionVersion) {
            request.pin = pin
        }
        if let turn {
            request.conversation = turn.conversation
            request.stopsAtReadyConfirm = turn.stopsAtReadyConfirm
        }
        requests[id] = request
        requestIDs[key] = id
        if !identity.isEmpty { identityRequestIDs[RequestKey(client: identity, id: decoded.requestID)] = id }
        if journaling { journal.append(.accepted(request, intentType: intentTypes[type].name)) }
        statistics.requestsAccepted += 1
        // Act a little before the deadline so that the first reply arrives by it (section 6.3).
        setTimer(.deadline, at: now + deadline - replyMargin(deadline), for: id)
        dispatch(id, atFront: false, now: now)
    }

    /// A duplicate of keyed request `first` (same key, same body): it gets the same ending, and its own progress
    /// reply at its own deadline (section 6.3, as if it were the request). Never a second job.
    mutating func attach(
        _ key: RequestKey, version: UInt8, deadline: UInt64, to first: RequestID, now: UInt64
    ) {
        guard let request = requests[first] else { return }
        let actAt = now + deadline - replyMargin(deadline)
        let listener = Listener(key: key, version: version, actAt: actAt, arrival: now)
        requests[first]?.listeners.append(listener)
        if journaling { journal.append(.attached(first, listener)) }
        setTimer(.listenerDeadline, at: actAt, for: first)
        requestIDs[key] = first
        if !request.identity.isEmpty { identityRequestIDs[RequestKey(client: request.identity, id: key.id)] = first }
        statistics.requestsAccepted += 1
        statistics.attachedDuplicates += 1
    }

    /// The stored final reply of a completed key, sent again and flagged as a replay.
    private mutating func replay(_ scope: IdempotencyScope, to key: RequestKey, version: UInt8, now: UInt64) {
        guard let result = idempotency.reply(for: scope) else { return }
        statistics.replays += 1
        if let type = intentTypeIndex[ByteKey(scope.intentType)] {
            metrics?.requestEnded(
                intent: metricsLabel(ofType: type), phase: result.phase.description,
                outcome: result.isError ? "handler-error" : "final", finalNanoseconds: nil, firstReply: false)
        }
        results.store(result, for: key, now: now)  // STATUS of the replayed request answers it too
        if journaling { journal.append(.stored(result, key: key, version: version, at: now)) }
        actions.append(
            .reply(
                ClientReply(
                    client: key.client, command: .reply, requestID: key.id, status: result.isError ? .error : .final,
                    phase: result.phase, payload: result.payload, isReplay: true, version: version)))
    }

    /// The index of a served intent type (section 6.6). During the startup grace period a type no worker announced
    /// yet counts as served until that period ends (its requests queue), so that a starting broker does not answer
    /// `unknown-intent` to requests that arrive before the workers have registered.
    private mutating func servedType(_ name: [UInt8], now: UInt64) -> Int? {
        if let type = intentTypeIndex[ByteKey(name)] {
            return intentTypes[type].isServed(now: now) ? type : nil
        }
        guard now < startupGraceEnd, intentTypes.count < Self.maxIntentTypesAtStartup else { return nil }
        let type = intern(name)
        intentTypes[type].servedUntil = startupGraceEnd
        return type
    }

    /// How many intent types requests may create during the startup grace period (a bound on what a client can make
    /// the broker keep by sending made-up types).
    static var maxIntentTypesAtStartup: Int { 1024 }

    /// Why a request that would have to wait is refused (checks 14 and 15), as the body of its `busy` error, or nil
    /// when it may queue.
    ///
    /// Fair across clients (section 6.5): when the queue is at a bound, the client with the most queued requests of
    /// the type pays. A request from a lighter client is admitted by shedding the heaviest client's newest queued
    /// request (it gets `busy` at once); the heaviest client's own request is refused. The pace check counts only
    /// the requests round robin would take before this one (`client` is the lane it would wait in), and admits what
    /// could start within 80% of the deadline, or within ``BrokerConfiguration/maxQueueWait`` when that is shorter;
    /// a standing queue is held to ``BrokerConfiguration/standingQueueWait``.
    /// Under overload most requests end here, so the pace refusal's body is reused while the pace stays the same
    /// (`Docs/OVERLOAD.md`).
    private mutating func admissionRefusal(type: Int, deadline: UInt64, client: [UInt8], now: UInt64) -> [UInt8]? {
        let queued = intentTypes[type].queue.count
        var full: String?
        if queuedCount >= configuration.maxQueuedRequests {
            full = "the broker's queue is full"
        } else if queued >= configuration.maxQueuedPerIntentType {
            full = "the queue of intent type \"\(intentTypes[type].displayName)\" is full"
        }
        if let full {
            guard shedHeaviest(type: type, toAdmit: client, because: full, now: now) else {
                guard let rate = pushbackRate(type: type, client: client) else { return WireBody.error(.busy, full) }
                return WireBody.busy(full, pushbackRate: rate, milliseconds: Self.pushbackMilliseconds)
            }
        }
        let pace = intentTypes[type].pace
        let ahead = intentTypes[type].queue.fairPosition(of: client)
        var horizon = min(deadline / 5 * 4, settings.maxQueueWait)
        if let standingQueueWait = settings.standingQueueWait, !intentTypes[type].queue.isEmpty,
            now &- intentTypes[type].queueBusySince >= settings.standingQueueInterval
        {
            horizon = min(horizon, max(standingQueueWait, intentTypes[type].turnoverNanos))
        }
        guard pace.wouldMiss(ahead: ahead, deadline: horizon, fraction: 1) else { return nil }
        statistics.shedRequests += 1
        let jobsPerSecond = Self.twoSignificantDigits(pace.jobsPerSecond)
        let rate = pushbackRate(type: type, client: client)
        if let cached = intentTypes[type].paceRefusal, cached.jobsPerSecond == jobsPerSecond,
            cached.pushbackRate == rate
        {
            return cached.body
        }
        let message =
            "no worker could start the request before its deadline: intent type \"\(intentTypes[type].displayName)\" runs "
            + "about \(jobsPerSecond) jobs/s, and the requests already queued would take it past the deadline"
        let body =
            rate.map { WireBody.busy(message, pushbackRate: $0, milliseconds: Self.pushbackMilliseconds) }
            ?? WireBody.error(.busy, message)
        intentTypes[type].paceRefusal = (jobsPerSecond, rate, body)
        return body
    }

    /// The pushback rate (section 6.3, rule 2; ``Pushback``) of a refusal of `client`'s request of `type`: the type's
    /// measured pace with ``pushbackHeadroom`` more, split evenly among the clients with queued requests of the type
    /// (this one included), in two significant digits. Nil while the pace is not measured.
    ///
    /// The headroom keeps the queue fed while every client sends its share, and keeps refusing a little, so that the
    /// hints are renewed while the overload lasts. An even split is the fair share of clients that all send more than
    /// it, which is what a refused client does; a lighter client's unused share goes to the others as refusals stop.
    private mutating func pushbackRate(type: Int, client: [UInt8]) -> Int? {
        let pace = intentTypes[type].pace.jobsPerSecond
        guard pace >= 1 else { return nil }
        var clients = intentTypes[type].queue.clientCount
        if intentTypes[type].queue.count(of: client) == 0 { clients += 1 }
        return max(1, Self.twoSignificantDigits(pace * Self.pushbackHeadroom / Double(clients)))
    }

    /// How much more than the measured pace the clients refused are asked to send, together.
    static var pushbackHeadroom: Double { 1.1 }

    /// How long a pushback hint holds (ms): about the pace's memory, so a client hears of a change within it.
    static var pushbackMilliseconds: Int { 1000 }

    /// `value` rounded to two significant digits (12,345 -> 12,000), so that a refusal names a pace that changes
    /// only when the pace really does.
    static func twoSignificantDigits(_ value: Double) -> Int {
        guard value.isFinite, value >= 1 else { return 0 }
        var scale = 1.0
        while value / scale >= 100 { scale *= 10 }
        return Int((value / scale).rounded()) * Int(scale)
    }

    /// Sheds the newest queued request of the client with the most queued requests of `type`, if that client holds
    /// at least two more than `client` (so the shed client stays the heavier one and the two never swap places).
    /// A request that ran before (a re-dispatched job) is not shed this way. Returns whether one was shed.
    private mutating func shedHeaviest(type: Int, toAdmit client: [UInt8], because full: String, now: UInt64) -> Bool {
        guard let heaviest = intentTypes[type].queue.heaviest(),
            heaviest.count >= intentTypes[type].queue.count(of: client) + 2,
            requests[heaviest.newest]?.started == false
        else { return false }
        statistics.shedRequests += 1
        fail(
            heaviest.newest, .busy,
            "\(full): shed to make room for another client's request (this client has the most queued)", now: now)
        return true
    }

    /// STATUS: the request's progress, its kept result, or `unknown-request` (section 6.4).
    mutating func status(
        client: [UInt8], requestID: [UInt8], identity: [UInt8] = [], version: UInt8 = 1, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.status(requestID: requestID), client: client, version: version)
        }
        let key = RequestKey(client: client, id: requestID)
        if let id = requestIDs[key], let request = requests[id], isOwnRequest(request, identity: identity) {
            let since = request.listeners.first { $0.key == key }?.arrival  // an attached duplicate's own clock
            actions.append(
                .reply(
                    ClientReply(
                        client: client, command: .status, requestID: requestID, status: .progress,
                        phase: request.phase.name, payload: .bytes(progressBody(request, now: now, since: since)),
                        version: version)))
        } else if let result = results.result(for: key) {
            actions.append(
                .reply(
                    ClientReply(
                        client: client, command: .status, requestID: requestID,
                        status: result.isError ? .error : .final, phase: result.phase, payload: result.payload,
                        version: version)))
        } else {
            reject(
                client: client, requestID: requestID, phase: "", version: version, .unknownRequest,
                "no request with this id is in flight or kept on this connection", command: .status)
        }
    }

    /// Whether a client with `identity` (its CURVE key and scope) may ask about or cancel `request`: always without
    /// a permissions file (as before them); with one, only the key and scope that sent it (PROTOCOL.md 13.3: another
    /// identity that uses the same routing id learns nothing of it).
    func isOwnRequest(_ request: BrokerRequest<Body>, identity: [UInt8]) -> Bool {
        permissions == nil || request.identity == identity
    }

    /// The progress body of section 11.9; `since` is an attached duplicate's own acceptance (nil: the request's).
    func progressBody(_ request: BrokerRequest<Body>, now: UInt64, since: UInt64? = nil) -> [UInt8] {
        WireBody.progress(
            state: request.isQueued ? "queued" : "running",
            phase: request.phase,
            elapsedMilliseconds: Int((now &- (since ?? request.arrival)) / 1_000_000),
            worker: request.worker.flatMap { workers[$0]?.name }
        )
    }

    /// A reply the shell could not deliver (client gone or its queue full): counted; the result stays for STATUS.
    mutating func replyNotDelivered() {
        statistics.undeliveredReplies += 1
    }
}
