import ConciergeJSON
import IntentWire
import Logging

/// The client's rules, without sockets or clocks: requests in flight, the STATUS sweep after a reconnect, following
/// the active broker (endpoint rotation), silence and the reconnect timeout, the throttle and the broker's pushback,
/// cancellation, and conversations' TURN, CONVERSATION and END (`Schemas/PROTOCOL.md` sections 4.9, 4.10.2, 6.3,
/// 7.2 and 7.3, and the conversation section). A TURN is kept and answered like a REQUEST (by request id); reads and
/// ENDs are answered by the CONVERSATION answer about their conversation, in order. The turn numbers are
/// ``ConversationLedger``'s.
///
/// The loop (``ClientCore``) hands it one event at a time with the time (`now`, monotonic nanoseconds): a command of a
/// caller, a decoded reply, a connection event, a turn of the loop. The machine sends through the connection it is
/// given (encoding with IntentWire's ``ClientMessageEncoder``), and queues in ``actions`` what the loop must do with
/// the callers' continuations. With several endpoints it is connected to one at a time: on a move it asks the
/// connection for a new one (same routing id, same keys) to the next endpoint, sends again the requests that never
/// left the old one, and sweeps once the new connection's handshake succeeds. Requests in flight wait for a broker up
/// to ``ClientConfiguration/reconnectTimeout``.
struct ClientStateMachine<Stream, Waiter, PingWaiter> {
    /// A caller's command.
    enum Command {
        /// Send a request (its REQUEST's frames, kept to be sent again on another connection); `serial` tells it
        /// apart from an earlier request with the same id.
        case request(id: String, serial: UInt64, frames: [[UInt8]], stream: Stream)
        /// Ask STATUS about a request.
        case status(id: String, waiter: Waiter)
        /// Ask PING.
        case ping(PingWaiter)
        /// The caller of request `serial` stopped listening: send CANCEL, drop the ending.
        case abandon(id: String, serial: UInt64)
        /// Send CANCEL, answer with the request's ending.
        case cancel(id: String, waiter: Waiter)
        /// Send a conversation's TURN (its frames, kept like a REQUEST's, answered by REPLY like one);
        /// `intentType`, when known, keys the throttle and the pushback.
        case turn(id: String, serial: UInt64, frames: [[UInt8]], intentType: String?, stream: Stream)
        /// Read (`CONVERSATION`) or end (`END`) conversation `id`: the next CONVERSATION answer about it answers.
        case conversation(id: String, end: Bool, waiter: Waiter)
    }

    typealias Action = ClientAction<Stream, Waiter, PingWaiter>

    /// A request in flight.
    struct Pending {
        let serial: UInt64
        /// The caller's stream; nil once the caller stopped listening (its Task was cancelled, or it dropped the
        /// stream): the request stays here until its ending comes, which is then dropped (PROTOCOL.md 4.9), so
        /// that a late reply never reaches a finished stream nor a later request with the same id.
        var stream: Stream?
        /// Callers of `cancel(requestID:)` waiting for the request's ending.
        var cancelWaiters: [Waiter] = []
        /// CANCEL went out for this request (it is sent once).
        var cancelSent = false
        /// The connection the CANCEL went out on (sent again after a reconnect).
        var cancelConnection: UInt64 = 0
        /// The REQUEST's frames, sent again on the next connection if they never left the current one.
        let frames: [[UInt8]]
        /// The connection the REQUEST was last sent on.
        var sentOn: UInt64
        /// Whether the REQUEST may have reached a broker: it was sent while the socket had a connection, or the
        /// socket completed a handshake since (libzmq then sends what it queued). If not, it is still queued on the
        /// current connection, and a move sends it again on the next one instead of asking about it.
        var mayHaveArrived: Bool
        /// With ``ClientConfiguration/throttle`` or the pushback: the request's intent type, until its first answer
        /// is counted.
        var throttleKey: String?
        /// A conversation's TURN (`CIPC03`), not a REQUEST.
        var isTurn = false
    }

    /// A caller of a conversation read or END, waiting for the CONVERSATION answer about its conversation.
    struct ConversationWaiter {
        let waiter: Waiter
        /// END rather than a read.
        let end: Bool
        /// The connection the query was sent on (sent again after a reconnect).
        var connection: UInt64
    }

    /// Who gets the next STATUS answer for a request id (the broker answers the STATUS queries about one id in
    /// order).
    enum StatusWaiter {
        /// A caller of `status(of:)`; `connection`: the connection its query was sent on.
        case caller(Waiter, connection: UInt64)
        /// The sweep after a reconnect, asking about the request with this serial.
        case sweep(serial: UInt64)
        /// A caller of `cancel(requestID:)` about a request not in flight on this client: the broker answers the
        /// CANCEL as STATUS would, or, if it had the request in flight for this routing id, with the request's
        /// ending REPLY (whichever comes first answers).
        case cancel(Waiter, connection: UInt64)
    }

    let configuration: ClientConfiguration
    let logger: Logger
    /// What the loop must do next, in order.
    var actions: [Action] = []

    private(set) var pending: [String: Pending] = [:]
    /// With ``ClientConfiguration/throttle``: one throttle per intent type.
    private var throttles: [String: AdaptiveThrottle] = [:]
    /// With ``ClientConfiguration/heedsPushback``: the broker's pushback per intent type.
    private var pushbacks: [String: Pushback] = [:]
    private(set) var statusWaiters: [String: [StatusWaiter]] = [:]
    /// Callers of conversation reads and ENDs, per conversation id, in the order sent (the broker answers the
    /// queries about one conversation in order).
    private(set) var conversationWaiters: [String: [ConversationWaiter]] = [:]
    private var pingWaiters: [PingWaiter] = []
    /// Counts the connections to the broker: one more after every disconnect or move.
    private(set) var connection: UInt64 = 0
    /// The connection dropped (or the client moved to a new connection) and no handshake has succeeded since.
    private var reconnecting = false
    /// The endpoint in use, and when to move to the next.
    private(set) var rotation: EndpointRotation
    /// The current connection completed its handshake (and has not dropped since).
    private var established = false
    /// Connected to a broker now: the current connection completed its handshake and has not dropped (a broker gone
    /// silent makes the client move, which drops it).
    var isConnected: Bool { established }

    /// A handshake with a broker ever completed: after one did, a connection breaking off during the handshake means
    /// the broker went away, not that it requires CURVE.
    private(set) var handshakeSucceededBefore = false
    /// Since when the client has been looking for a broker (the connection dropped or the broker went silent, and
    /// no broker has answered since): requests in flight fail with `connectionLost` after `reconnectTimeout`.
    private(set) var lostSince: UInt64?
    /// A reply said `unavailable`: move to the next endpoint at the next turn.
    private var moveRequested = false
    /// Set once a security handshake failed for good (refused key, mechanism mismatch): libzmq does not retry, so
    /// requests fail at once with it.
    private var handshakeFailure: ClientError?
    /// Why the last handshake broke off, when libzmq retries it (the connection closed during the handshake).
    private var handshakeTrouble: String?
    /// When the broker was last heard from (or the client last began waiting for it).
    private var lastHeard: UInt64
    /// When the last PING went out.
    private var lastPing: UInt64 = 0

    /// A machine for `configuration` (at least one endpoint), awaiting the first connection's handshake from `now`.
    init(configuration: ClientConfiguration, logger: Logger, now: UInt64) {
        self.configuration = configuration
        self.logger = logger
        rotation = EndpointRotation(
            endpoints: configuration.brokerEndpoints, handshakeWindow: configuration.heartbeatInterval.nanoseconds)
        rotation.awaitHandshake(from: now)
        lastHeard = now
    }

    /// Whether anything waits for the broker.
    var isBusy: Bool {
        !pending.isEmpty || !statusWaiters.isEmpty || !pingWaiters.isEmpty || !conversationWaiters.isEmpty
    }

    private var interval: UInt64 { configuration.heartbeatInterval.nanoseconds }
    private var liveness: UInt64 { UInt64(max(1, configuration.heartbeatLiveness)) }

    /// When the loop must give the machine its next turn (``tick(now:connection:)``) if nothing happens before.
    ///
    /// The heartbeat's time counts only while something waits for the broker (an idle client sends no PING and
    /// watches no silence, ``tick(now:connection:)``): were it counted when idle, it would pass after one interval and
    /// stay past, and the loop would never sleep again.
    var wakeTime: UInt64 {
        var wakeAt = isBusy ? max(lastHeard, lastPing) + interval : UInt64.max
        if let deadline = rotation.moveDeadline { wakeAt = min(wakeAt, deadline) }
        if let lostSince { wakeAt = min(wakeAt, lostSince + configuration.reconnectTimeout.nanoseconds) }
        return wakeAt
    }

    // MARK: Events

    /// Callers' commands arrived: executes them in order.
    mutating func commands<C: ClientConnection>(_ commands: [Command], now: UInt64, connection: inout C) {
        if !commands.isEmpty && !isBusy {
            // Idle until now: the broker's silence so far says nothing; start timing from here.
            lastHeard = now
            if lostSince != nil { lostSince = now }
        }
        for command in commands { execute(command, now: now, connection: &connection) }
    }

    /// A message from the broker, decoded: `reply` is a REPLY or STATUS answer (`isStatus`), or nil for a PONG.
    mutating func received(_ reply: Reply?, isStatus: Bool, now: UInt64) {
        lastHeard = now
        guard let reply else {
            for waiter in pingWaiters { actions.append(.resumePing(waiter, nil)) }
            pingWaiters.removeAll()
            lostSince = nil
            return
        }
        if reply.requestID.isEmpty, let code = reply.errorCode,
            code == WireErrorCode.unsupportedVersion.rawValue || code == WireErrorCode.unknownCommand.rawValue
        {
            // Only conversations (CIPC03) and traced requests (CIPC04) go out in a version a broker may not speak,
            // and every other command this client sends has an F2 the answer would echo: this broker has neither.
            lostSince = nil
            failConversations(
                ClientError(
                    code: .conversationsUnsupported,
                    message: "the broker at \(rotation.current) does not serve conversations (CIPC03; it answered "
                        + "\(code))"))
            failTracedRequests(code: code)
            return
        }
        let unavailable = reply.errorCode == WireErrorCode.unavailable.rawValue
        if unavailable {
            // Nothing was accepted: the caller gets the error (a retry is always safe), and the client moves on.
            logger.info(
                "the broker is unavailable (it cannot record work)",
                metadata: ["broker": "\(rotation.current)", "request": "\(reply.requestID)"])
            moveRequested = true
        } else {
            // A broker that can record work answered: the client is no longer looking for one.
            lostSince = nil
        }
        deliver(reply, id: reply.requestID, isStatus: isStatus)
    }

    /// A CONVERSATION answer (to a read or an END; `reply.requestID` is the conversation id): the first caller
    /// waiting about that conversation gets it.
    mutating func receivedConversation(_ reply: Reply, now: UInt64) {
        lastHeard = now
        lostSince = nil
        let id = reply.requestID
        guard var waiters = conversationWaiters[id], !waiters.isEmpty else { return }
        let first = waiters.removeFirst()
        conversationWaiters[id] = waiters.isEmpty ? nil : waiters
        actions.append(.resume(first.waiter, .success(reply)))
    }

    /// A message from the broker that is not a reply a client can use: it still proves the broker alive.
    mutating func receivedMalformed(now: UInt64) {
        lastHeard = now
        lostSince = nil
    }

    /// A turn of the loop after the commands and messages were handled: silence, the handshake window, a requested
    /// move, the reconnect timeout, and the PING that keeps a busy client's broker talking.
    mutating func tick<C: ClientConnection>(now: UInt64, connection: inout C) {
        let busy = isBusy
        if busy && now - lastHeard > interval * liveness {
            if lostSince == nil { lostSince = now }
            logger.info(
                "the broker went silent",
                metadata: [
                    "broker": "\(rotation.current)", "heartbeats": "\(liveness)", "requests": "\(pending.count)",
                ])
            move(reason: "the broker was silent for \(liveness) heartbeats", now: now, connection: &connection)
            lastHeard = now
        } else if rotation.handshakeOverdue(at: now) {
            // No broker here (a standby binds nothing): the client is looking for one. The silence rule still
            // counts from the last message heard.
            if busy && lostSince == nil { lostSince = now }
            move(reason: "no handshake within one heartbeat interval", now: now, connection: &connection)
        } else if moveRequested && rotation.rotates {
            if busy && lostSince == nil { lostSince = now }
            move(reason: "the broker answered unavailable", now: now, connection: &connection)
        }
        moveRequested = false
        if let since = lostSince, busy, now - since >= configuration.reconnectTimeout.nanoseconds {
            let trouble = handshakeTrouble.map { "; the last handshake failed: \($0)" } ?? ""
            failAll(
                ClientError(
                    code: .connectionLost,
                    message: "no broker answered within \(configuration.reconnectTimeout) "
                        + "(\(rotation.endpoints.joined(separator: ",")))\(trouble)"))
            lostSince = nil
        }
        if now - max(lastHeard, lastPing) >= interval && busy {
            _ = try? ClientMessageEncoder.ping(into: &connection)
            lastPing = now
        }
    }

    /// The client closes: everything waiting fails with ``ClientError/Code/closed``.
    mutating func close() {
        failAll(ClientError(code: .closed, message: "the client is closed"))
    }

    /// An event of the connection. A refusal or a mechanism mismatch fails everything waiting, and later requests
    /// (libzmq gives that connection up); a connection that broke off during the handshake is retried by libzmq, and
    /// only remembered to explain a later `connectionLost`. A handshake that succeeds after a disconnect starts a
    /// sweep: the broker may be a new one that lost the requests in flight.
    mutating func connectionEvent<C: ClientConnection>(
        _ event: ClientConnectionEvent, now: UInt64, connection: inout C
    ) {
        switch event {
        case .disconnected:
            if !reconnecting {
                logger.debug(
                    "the connection to the broker dropped",
                    metadata: ["broker": "\(rotation.current)", "requests": "\(pending.count)"]
                )
            }
            rotation.awaitHandshake(from: now)
            if lostSince == nil { lostSince = now }
            established = false
            reconnecting = true
            self.connection += 1
        case .handshakeSucceeded:
            handshakeFailure = nil
            handshakeTrouble = nil
            rotation.handshakeSucceeded()
            established = true
            handshakeSucceededBefore = true
            if reconnecting {
                reconnecting = false
                logger.info(
                    "connected to the broker",
                    metadata: ["broker": "\(rotation.current)", "requests": "\(pending.count)"])
                sweep(connection: &connection)
            }
            for id in Array(pending.keys) { pending[id]?.mayHaveArrived = true }
        case .handshakeBrokeOff(let explanation):
            logger.warning(
                "the connection to the broker broke off during the handshake; retrying",
                metadata: ["broker": "\(rotation.current)", "reason": "\(explanation)"]
            )
            handshakeTrouble = explanation
        case .handshakeFailed(let explanation):
            logger.error(
                "security handshake with the broker failed",
                metadata: ["broker": "\(rotation.current)", "reason": "\(explanation)"]
            )
            let error = ClientError(code: .handshakeFailed, message: "\(rotation.current): \(explanation)")
            handshakeFailure = error
            failAll(error)
        }
    }

    // MARK: Commands

    private mutating func execute<C: ClientConnection>(_ command: Command, now: UInt64, connection: inout C) {
        if let handshakeFailure {
            fail(command, handshakeFailure)
            return
        }
        switch command {
        case .request(let id, let serial, let frames, let stream):
            let throttleKey =
                configuration.throttle == nil && !configuration.heedsPushback ? nil : Self.intentType(of: frames)
            sendRequest(
                id, serial: serial, frames: frames, throttleKey: throttleKey, isTurn: false, stream, now: now,
                connection: &connection)
        case .turn(let id, let serial, let frames, let intentType, let stream):
            let throttleKey = configuration.throttle == nil && !configuration.heedsPushback ? nil : intentType
            sendRequest(
                id, serial: serial, frames: frames, throttleKey: throttleKey, isTurn: true, stream, now: now,
                connection: &connection)
        case .conversation(let id, let end, let waiter):
            if Self.sendConversationQuery(id, end: end, into: &connection) {
                conversationWaiters[id, default: []].append(
                    ConversationWaiter(waiter: waiter, end: end, connection: self.connection))
            } else {
                actions.append(.resume(waiter, .failure(connectionGivenUp(&connection, now: now))))
            }
        case .status(let id, let waiter):
            if (try? ClientMessageEncoder.status(into: &connection, requestID: id)) == true {
                statusWaiters[id, default: []].append(.caller(waiter, connection: self.connection))
            } else {
                actions.append(.resume(waiter, .failure(connectionGivenUp(&connection, now: now))))
            }
        case .ping(let waiter):
            if (try? ClientMessageEncoder.ping(into: &connection)) == true {
                pingWaiters.append(waiter)
            } else {
                actions.append(.resumePing(waiter, connectionGivenUp(&connection, now: now)))
            }
        case .abandon(let id, let serial):
            // The caller stopped listening: stop the request at the broker, and drop its ending when it comes.
            guard var request = pending[id], request.serial == serial else { return }
            request.stream = nil
            if !request.cancelSent {
                guard Self.sendCancel(id, into: &connection) else {
                    pending[id] = request
                    finish(id, .failure(connectionGivenUp(&connection, now: now)))
                    return
                }
                request.cancelSent = true
                request.cancelConnection = self.connection
            }
            pending[id] = request
        case .cancel(let id, let waiter):
            if var request = pending[id] {
                if !request.cancelSent {
                    guard Self.sendCancel(id, into: &connection) else {
                        actions.append(.resume(waiter, .failure(connectionGivenUp(&connection, now: now))))
                        return
                    }
                    request.cancelSent = true
                    request.cancelConnection = self.connection
                }
                request.cancelWaiters.append(waiter)
                pending[id] = request
            } else if Self.sendCancel(id, into: &connection) {
                statusWaiters[id, default: []].append(.cancel(waiter, connection: self.connection))
            } else {
                actions.append(.resume(waiter, .failure(connectionGivenUp(&connection, now: now))))
            }
        }
    }

    /// Sends a REQUEST or TURN (unless the throttle or the pushback refuses it) and keeps it in flight.
    private mutating func sendRequest<C: ClientConnection>(
        _ id: String, serial: UInt64, frames: [[UInt8]], throttleKey: String?, isTurn: Bool, _ stream: Stream,
        now: UInt64, connection: inout C
    ) {
        guard pending[id] == nil else {
            actions.append(
                .finish(
                    stream, ClientError(code: .duplicateRequest, message: "request \(id) is already in flight")))
            return
        }
        if let throttleKey,
            let refusal = pushback(throttleKey, id: id, now: now) ?? throttle(throttleKey, id: id, now: now)
        {
            actions.append(.finish(stream, refusal))
            return
        }
        // Sends never wait: without a high-water mark the DEALER queues while it has a connection pipe, and
        // it has none only once libzmq has given up on the connection (a failed security handshake).
        do {
            guard try Self.send(frames, into: &connection) else {
                actions.append(.finish(stream, connectionGivenUp(&connection, now: now)))
                return
            }
            pending[id] = Pending(
                serial: serial, stream: stream, frames: frames, sentOn: self.connection,
                mayHaveArrived: established, throttleKey: throttleKey, isTurn: isTurn)
        } catch {
            actions.append(.finish(stream, ClientError(code: .transport, message: "\(error)")))
        }
    }

    /// Ends a command unsent with `error`.
    private mutating func fail(_ command: Command, _ error: ClientError) {
        switch command {
        case .request(_, _, _, let stream), .turn(_, _, _, _, let stream): actions.append(.finish(stream, error))
        case .status(_, let waiter), .cancel(_, let waiter), .conversation(_, _, let waiter):
            actions.append(.resume(waiter, .failure(error)))
        case .ping(let waiter): actions.append(.resumePing(waiter, error))
        case .abandon: break
        }
    }

    /// Why nothing can be sent: the failed handshake that made libzmq drop the connection (the connection's events
    /// not handed over yet are read first, so that the refusal says why).
    private mutating func connectionGivenUp<C: ClientConnection>(_ connection: inout C, now: UInt64) -> ClientError {
        for event in connection.takeEvents(handshakeSucceededBefore: handshakeSucceededBefore) {
            connectionEvent(event, now: now, connection: &connection)
        }
        return handshakeFailure
            ?? ClientError(
                code: .handshakeFailed,
                message: "\(rotation.current): libzmq closed the connection for good (failed handshake)"
            )
    }

    /// Moves to the next endpoint (the same one when there is only one): a new connection with the same routing id
    /// and keys. REQUESTs that never left the old connection are sent again on the new one; the others, and the
    /// STATUS and CANCEL queries of the old connection, are asked about (or sent again) by the sweep once the new
    /// connection completes its handshake.
    private mutating func move<C: ClientConnection>(reason: String, now: UInt64, connection: inout C) {
        let from = rotation.current
        let endpoint = rotation.advance()
        guard connection.reconnect(to: endpoint) else {
            logger.error("cannot connect to the broker", metadata: ["broker": "\(endpoint)"])
            rotation.awaitHandshake(from: now)  // try the next one after the window
            return
        }
        rotation.awaitHandshake(from: now)
        self.connection += 1
        reconnecting = true
        established = false
        logger.info(
            rotation.rotates ? "moving to the next broker endpoint" : "reconnecting to the broker on a new connection",
            metadata: [
                "broker": "\(endpoint)", "from": "\(from)", "reason": "\(reason)", "requests": "\(pending.count)",
            ])
        for (id, request) in pending where !request.mayHaveArrived {
            if (try? Self.send(request.frames, into: &connection)) == true { pending[id]?.sentOn = self.connection }
        }
    }

    // MARK: Replies

    private mutating func deliver(_ reply: Reply, id: String, isStatus: Bool) {
        if isStatus {
            guard var waiters = statusWaiters[id], !waiters.isEmpty else { return }
            // The broker answers a CANCEL as STATUS only about a request it does not have in flight, so never with
            // `progress`: a `progress` answer is for the first STATUS query or sweep waiting.
            let index =
                reply.status == .progress
                ? waiters.firstIndex { if case .cancel = $0 { false } else { true } } : waiters.startIndex
            guard let index else { return }
            let waiter = waiters.remove(at: index)
            statusWaiters[id] = waiters.isEmpty ? nil : waiters
            switch waiter {
            case .caller(let waiter, _): actions.append(.resume(waiter, .success(reply)))
            case .cancel(let waiter, _): actions.append(.resume(waiter, .success(reply)))
            case .sweep(let serial): settle(id, serial: serial, with: reply)
            }
            return
        }
        // A request already ended by the sweep's STATUS answer gets no second ending.
        guard var request = pending[id] else {
            if reply.isFinal && answerCancel(id, with: reply) { return }
            if id.isEmpty {
                logger.warning("broker error without request id", metadata: ["body": "\(reply.json ?? .null)"])
            }
            return
        }
        if request.cancelSent && reply.errorCode == WireErrorCode.unknownCommand.rawValue {
            // The answer to our CANCEL from a broker without cancellation (a REQUEST is never unknown-command):
            // the request goes on.
            logger.warning("the broker does not support CANCEL", metadata: ["broker": "\(rotation.current)"])
            for waiter in request.cancelWaiters {
                actions.append(.resume(waiter, .failure(Self.cancelUnsupported(id))))
            }
            request.cancelWaiters.removeAll()
            pending[id] = request
            return
        }
        if request.throttleKey != nil { countFirstAnswer(of: id, &request, reply) }
        if reply.isFinal {
            finish(id, .success(reply))
        } else if let stream = request.stream {
            actions.append(.yield(stream, reply))
        }
    }

    /// Ends request `id` (whatever its serial): its stream gets the ending (unless the caller stopped listening),
    /// and so does every caller of `cancel(requestID:)` waiting for it.
    private mutating func finish(_ id: String, _ ending: Result<Reply, ClientError>) {
        guard let request = pending.removeValue(forKey: id) else { return }
        switch ending {
        case .success(let reply):
            if let stream = request.stream {
                actions.append(.yield(stream, reply))
                actions.append(.finish(stream, nil))
            }
        case .failure(let error):
            if let stream = request.stream { actions.append(.finish(stream, error)) }
        }
        for waiter in request.cancelWaiters { actions.append(.resume(waiter, ending)) }
    }

    /// Hands a request's ending REPLY to the first ``StatusWaiter/cancel(_:connection:)`` waiting about `id`, if
    /// any. An `unknown-command` error is a broker's answer to a CANCEL it does not know.
    private mutating func answerCancel(_ id: String, with reply: Reply) -> Bool {
        guard var waiters = statusWaiters[id],
            let index = waiters.firstIndex(where: { if case .cancel = $0 { true } else { false } }),
            case .cancel(let waiter, _) = waiters.remove(at: index)
        else { return false }
        statusWaiters[id] = waiters.isEmpty ? nil : waiters
        if reply.errorCode == WireErrorCode.unknownCommand.rawValue {
            actions.append(.resume(waiter, .failure(Self.cancelUnsupported(id))))
        } else {
            actions.append(.resume(waiter, .success(reply)))
        }
        return true
    }

    private static func cancelUnsupported(_ id: String) -> ClientError {
        ClientError(
            code: .cancelUnsupported,
            message: "request \(id): the broker does not support CANCEL (it answered unknown-command)"
        )
    }

    // MARK: Reconnecting

    /// After the connection came back: asks STATUS (PROTOCOL.md 4.3) about every request in flight, because the
    /// broker at the other end may be a new one that never heard of them (libzmq reconnects silently, and a new
    /// broker answers PING like the old one). Sent after any REQUEST still queued, so the broker has seen every
    /// request it is asked about, unless it lost it. STATUS queries of callers sent on an earlier connection may
    /// be lost with it and are asked again; a sweep's queries from an earlier reconnect are replaced. Extra
    /// answers are harmless: an answer nobody waits for is ignored.
    private mutating func sweep<C: ClientConnection>(connection: inout C) {
        for (id, waiters) in statusWaiters {
            var kept: [StatusWaiter] = []
            for waiter in waiters {
                switch waiter {
                case .sweep: continue
                case .caller(let waiter, let sentOn):
                    if sentOn < self.connection {
                        _ = try? ClientMessageEncoder.status(into: &connection, requestID: id)
                    }
                    kept.append(.caller(waiter, connection: self.connection))
                case .cancel(let waiter, let sentOn):
                    if sentOn < self.connection { _ = Self.sendCancel(id, into: &connection) }
                    kept.append(.cancel(waiter, connection: self.connection))
                }
            }
            statusWaiters[id] = kept.isEmpty ? nil : kept
        }
        // Conversation reads and ENDs of a lost connection may be lost with it: a read is safe to send again, and so
        // is an END (the second answers about a conversation already ended).
        for (id, waiters) in conversationWaiters {
            var kept = waiters
            for index in kept.indices where kept[index].connection < self.connection {
                _ = Self.sendConversationQuery(id, end: kept[index].end, into: &connection)
                kept[index].connection = self.connection
            }
            conversationWaiters[id] = kept
        }
        // A PING of the lost connection may be lost with it.
        if !pingWaiters.isEmpty { _ = try? ClientMessageEncoder.ping(into: &connection) }
        guard !pending.isEmpty else { return }
        logger.debug(
            "reconnected to the broker; asking it about the requests in flight",
            metadata: ["broker": "\(rotation.current)", "requests": "\(pending.count)"]
        )
        // A REQUEST sent on this connection (queued while it was down, or sent again after a move) reaches this
        // broker in order: nothing to ask about it.
        for (id, request) in pending
        where request.sentOn < self.connection
            && (try? ClientMessageEncoder.status(into: &connection, requestID: id)) == true
        {
            statusWaiters[id, default: []].append(.sweep(serial: request.serial))
        }
        // A CANCEL sent on the lost connection may be lost with it: send it again (after the STATUS, so that a new
        // broker's `unknown-request` answers the sweep).
        for (id, request) in pending where request.cancelSent && request.cancelConnection < self.connection {
            if Self.sendCancel(id, into: &connection) { pending[id]?.cancelConnection = self.connection }
        }
    }

    /// The broker's STATUS answer to the sweep about request `id` (if it is still the request with `serial`):
    /// `progress` keeps it waiting; `final` or `error` is its ending (its REPLY, if one comes too, is ignored);
    /// `unknown-request` ends it with ``ClientError/Code/brokerRestarted``.
    private mutating func settle(_ id: String, serial: UInt64, with reply: Reply) {
        guard let request = pending[id], request.serial == serial, reply.isFinal else { return }
        // An unavailable broker cannot tell: the request waits for the next one's sweep.
        if reply.errorCode == WireErrorCode.unavailable.rawValue { return }
        if reply.errorCode == WireErrorCode.unknownRequest.rawValue {
            logger.warning(
                "the broker no longer knows a request in flight (restarted?)",
                metadata: ["broker": "\(rotation.current)", "request": "\(id)"]
            )
            finish(
                id,
                .failure(
                    ClientError(
                        code: .brokerRestarted,
                        message: "request \(id): the broker restarted and no longer knows this request; "
                            + "whether it ran is unknown"
                    )
                )
            )
        } else {
            finish(id, .success(reply))
        }
    }

    private mutating func failAll(_ error: ClientError) {
        for id in Array(pending.keys) { finish(id, .failure(error)) }
        for waiters in statusWaiters.values {
            for waiter in waiters {
                switch waiter {
                case .caller(let waiter, _), .cancel(let waiter, _): actions.append(.resume(waiter, .failure(error)))
                case .sweep: break
                }
            }
        }
        statusWaiters.removeAll()
        for waiter in pingWaiters { actions.append(.resumePing(waiter, error)) }
        pingWaiters.removeAll()
        for waiters in conversationWaiters.values {
            for waiter in waiters { actions.append(.resume(waiter.waiter, .failure(error))) }
        }
        conversationWaiters.removeAll()
    }

    /// Fails every conversation operation waiting (the turns in flight, the reads and ENDs) with `error`.
    private mutating func failConversations(_ error: ClientError) {
        for (id, request) in pending where request.isTurn { finish(id, .failure(error)) }
        for waiters in conversationWaiters.values {
            for waiter in waiters { actions.append(.resume(waiter.waiter, .failure(error))) }
        }
        conversationWaiters.removeAll()
    }

    /// Ends the traced requests in flight (sent in `CIPC04`) with the broker's answer: a broker that predates trace
    /// context cannot read them, and its answer has no request id to say which it refused, so none would ever end.
    private mutating func failTracedRequests(code: String) {
        let traced = Array(CIP.clientSignatureV4.description.utf8)
        for (id, request) in pending where !request.isTurn && request.frames.first == traced {
            finish(
                id,
                .failure(
                    ClientError(
                        code: ClientError.Code(rawValue: code),
                        message: "request \(id): the broker at \(rotation.current) does not take trace context "
                            + "(CIPC04; it answered \(code)): send it without one")))
        }
    }

    // MARK: Throttle and pushback

    /// A REQUEST's intent type (F3 of `[signature, REQUEST, id, type, ...]`).
    private static func intentType(of frames: [[UInt8]]) -> String {
        frames.count > 3 ? String(decoding: frames[3], as: UTF8.self) : ""
    }

    /// Asks the throttle of intent type `key` whether to send a new request: nil to send it, else the error that
    /// ends it unsent.
    private mutating func throttle(_ key: String, id: String, now: UInt64) -> ClientError? {
        guard let configuration = configuration.throttle else { return nil }
        if throttles[key]?.admit(now: now) ?? true { return nil }
        let probability = throttles[key]?.refusalProbability(now: now) ?? 0
        return ClientError(
            code: .throttled,
            message: "request \(id): not sent: the broker refused many recent \(key) requests (busy), and this "
                + "client's throttle refuses about \(Int((probability * 100).rounded())) % of new ones "
                + "(multiplier \(configuration.multiplier))"
        )
    }

    /// Asks the pushback of intent type `key` whether to send a new request: nil to send it, else the error that
    /// ends it unsent.
    private mutating func pushback(_ key: String, id: String, now: UInt64) -> ClientError? {
        guard configuration.heedsPushback, var pushback = pushbacks[key] else { return nil }
        let admitted = pushback.admit(now: now)
        pushbacks[key] = pushback
        if admitted { return nil }
        return ClientError(
            code: .throttled,
            message: "request \(id): not sent: the broker is overloaded with \(key) requests and asked this client for "
                + "at most \(Int(pushback.rate)) per second for a while (pushback)"
        )
    }

    /// Counts a request's first answer in its intent type's throttle (`request` is its entry, `throttleKey` set):
    /// `busy` is a refusal, anything else an accept; and heeds the pushback a `busy` refusal carries.
    private mutating func countFirstAnswer(of id: String, _ request: inout Pending, _ reply: Reply) {
        guard let key = request.throttleKey else { return }
        request.throttleKey = nil
        pending[id] = request
        let refused = reply.status == .error && reply.errorCode == WireErrorCode.busy.rawValue
        let now = lastHeard
        if let configuration = configuration.throttle {
            throttles[key, default: AdaptiveThrottle(configuration: configuration)].record(
                accepted: !refused, now: now)
        }
        if refused, configuration.heedsPushback, let hint = Pushback.Hint(errorBody: reply.body) {
            pushbacks[key, default: Pushback()].heed(hint, now: now)
        }
    }

    // MARK: Sending

    /// Sends stored frames as one message; false if the connection refused the first.
    private static func send<C: ClientConnection>(_ frames: [[UInt8]], into connection: inout C) throws(C.Failure)
        -> Bool
    {
        for (index, frame) in frames.enumerated() {
            guard try connection.append(frame, more: index < frames.count - 1) else {
                precondition(index == 0, "a multipart send blocked after its first frame")
                return false
            }
        }
        return true
    }

    /// Sends `CIPC03 CONVERSATION <id>` or `CIPC03 END <id>`; false if libzmq gave the connection up.
    private static func sendConversationQuery<C: ClientConnection>(
        _ id: String, end: Bool, into connection: inout C
    ) -> Bool {
        if end { return (try? ClientMessageEncoder.end(into: &connection, conversationID: id)) == true }
        return (try? ClientMessageEncoder.conversation(into: &connection, conversationID: id)) == true
    }

    /// Sends `CIPC02 CANCEL <id>` (PROTOCOL.md 4.10.2); false if libzmq gave the connection up.
    private static func sendCancel<C: ClientConnection>(_ id: String, into connection: inout C) -> Bool {
        (try? ClientMessageEncoder.cancel(into: &connection, requestID: id)) == true
    }
}
