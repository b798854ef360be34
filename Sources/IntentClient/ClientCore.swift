import ConciergeJSON
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The client's socket loop (one thread owns the socket).
///
/// With several broker endpoints the client is connected to one at a time and follows the active broker
/// (``EndpointRotation``): on a move it makes a new socket (same routing id, same CURVE keys) to the next endpoint,
/// sends again the requests that never left the old one, and sweeps (``sweep()``) once the new connection's
/// handshake succeeds. Requests in flight wait for a broker up to ``ClientConfiguration/reconnectTimeout``.
final class ClientCore: @unchecked Sendable {
    let configuration: ClientConfiguration
    let logger: Logger
    private let context = ZMQContext()
    /// The socket to the endpoint in use (replaced on every move).
    private var socket: ZMQSocket
    /// Reports failed security handshakes (a refused CURVE key, a CURVE/plain mismatch), which libzmq does not
    /// retry, and the connection dropping and coming back (which may be a restarted broker). One per socket.
    private var monitor: ZMQSocketMonitor
    private let wake = EventFD()
    private let inbox = Mutex<(commands: [ConciergeClient.Command], closed: Bool)>(([], false))

    /// A request in flight; `serial` tells it apart from an earlier request with the same id.
    private struct Pending {
        let serial: UInt64
        /// The caller's stream; nil once the caller stopped listening (its Task was cancelled, or it dropped the
        /// stream): the request stays here until its ending comes, which is then dropped (PROTOCOL.md 4.9), so
        /// that a late reply never reaches a finished stream nor a later request with the same id.
        var continuation: ConciergeClient.ReplyStream.Continuation?
        /// Callers of ``ConciergeClient/cancel(requestID:)`` waiting for the request's ending.
        var cancelWaiters: [CheckedContinuation<Reply, any Error>] = []
        /// CANCEL went out for this request (it is sent once).
        var cancelSent = false
        /// The connection the CANCEL went out on (sent again after a reconnect).
        var cancelConnection: UInt64 = 0
        /// The REQUEST's frames, sent again on the next socket if they never left the current one.
        let frames: [[UInt8]]
        /// The connection the REQUEST was last sent on.
        var sentOn: UInt64
        /// Whether the REQUEST may have reached a broker: it was sent while the socket had a connection, or the
        /// socket completed a handshake since (libzmq then sends what it queued). If not, it is still queued on the
        /// current socket, and a move sends it again on the next one instead of asking about it.
        var mayHaveArrived: Bool
        /// With ``ClientConfiguration/throttle``: the request's intent type, until its first answer is counted.
        var throttleKey: String?
    }

    /// Who gets the next STATUS answer for a request id (the broker answers the STATUS queries about one id in
    /// order).
    private enum StatusWaiter {
        /// A caller of ``ConciergeClient/status(of:)``; `connection`: the connection its query was sent on.
        case caller(CheckedContinuation<Reply, any Error>, connection: UInt64)
        /// The sweep after a reconnect, asking about the request with this serial.
        case sweep(serial: UInt64)
        /// A caller of ``ConciergeClient/cancel(requestID:)`` about a request not in flight on this client: the
        /// broker answers the CANCEL as STATUS would, or, if it had the request in flight for this routing id, with
        /// the request's ending REPLY (whichever comes first answers).
        case cancel(CheckedContinuation<Reply, any Error>, connection: UInt64)
    }

    // Loop-thread state
    private var pending: [String: Pending] = [:]
    /// With ``ClientConfiguration/throttle``: one throttle per intent type.
    private var throttles: [String: AdaptiveThrottle] = [:]
    /// With ``ClientConfiguration/heedsPushback``: the broker's pushback per intent type.
    private var pushbacks: [String: Pushback] = [:]
    private var statusWaiters: [String: [StatusWaiter]] = [:]
    /// Counts the connections to the broker: one more after every disconnect.
    private var connection: UInt64 = 0
    /// The connection dropped (or the client moved to a new socket) and no handshake has succeeded since.
    private var reconnecting = false
    /// The endpoint in use, and when to move to the next.
    private var rotation: EndpointRotation
    /// The current socket has a connection that completed its handshake (and has not dropped since).
    private var established = false
    /// A handshake with a broker ever completed: after one did, a connection breaking off during the handshake means
    /// the broker went away, not that it requires CURVE.
    private var handshakeSucceededBefore = false
    /// Since when the client has been looking for a broker (the connection dropped or the broker went silent, and
    /// no broker has answered since): requests in flight fail with `connectionLost` after `reconnectTimeout`.
    private var lostSince: UInt64?
    /// A reply said `unavailable`: move to the next endpoint after this turn of the loop.
    private var moveRequested = false
    private var pingWaiters: [CheckedContinuation<Void, any Error>] = []
    /// Set once a security handshake failed for good (refused key, mechanism mismatch): libzmq does not retry, so
    /// requests fail at once with it.
    private var handshakeFailure: ClientError?
    /// Why the last handshake broke off, when libzmq retries it (the connection closed during the handshake).
    private var handshakeTrouble: String?

    init(configuration: ClientConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        guard !configuration.brokerEndpoints.isEmpty else {
            throw ClientError(code: .transport, message: "no broker endpoint")
        }
        rotation = EndpointRotation(
            endpoints: configuration.brokerEndpoints, handshakeWindow: configuration.heartbeatInterval.nanoseconds)
        (socket, monitor) = try Self.makeSocket(
            context: context, configuration: configuration, endpoint: rotation.current)
        rotation.awaitHandshake(from: MonotonicTime.now())
    }

    /// A DEALER with the client's routing id and CURVE keys, and its monitor, connected to `endpoint`.
    private static func makeSocket(
        context: ZMQContext, configuration: ClientConfiguration, endpoint: String
    ) throws(ClientError) -> (ZMQSocket, ZMQSocketMonitor) {
        do {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.routingID, string: configuration.routingID)
            try socket.setOption(.sendHighWaterMark, 0)
            try socket.setOption(.receiveHighWaterMark, 0)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            let monitor = try ZMQSocketMonitor(
                context: context, watching: socket,
                events: ZMQMonitorEvent.Kind.handshakeFailures.union([.handshakeSucceeded, .disconnected])
            )
            do {
                try socket.connect(endpoint)
            } catch {
                monitor.close()
                socket.close()
                throw error
            }
            return (socket, monitor)
        } catch {
            throw ClientError(code: .transport, message: "\(endpoint): \(error)")
        }
    }

    func submit(_ command: ConciergeClient.Command) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            return true
        }
        if accepted {
            wake.signal()
        } else {
            fail(command, ClientError(code: .closed, message: "the client is closed"))
        }
    }

    func close() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.closed = true }
            return !inbox.closed
        }
        if first { wake.signal() }
    }

    private func fail(_ command: ConciergeClient.Command, _ error: ClientError) {
        switch command {
        case .request(_, _, _, let continuation): continuation.finish(throwing: error)
        case .status(_, let continuation): continuation.resume(throwing: error)
        case .ping(let continuation): continuation.resume(throwing: error)
        case .cancel(_, let continuation): continuation.resume(throwing: error)
        case .abandon: break
        }
    }

    func run() {
        var buffer = ZMQMultipart(capacity: 16)
        let interval = configuration.heartbeatInterval.nanoseconds
        let liveness = UInt64(max(1, configuration.heartbeatLiveness))
        let reconnectTimeout = configuration.reconnectTimeout.nanoseconds
        var lastHeard = MonotonicTime.now()
        var lastPing: UInt64 = 0
        var closed = false
        var polled: ObjectIdentifier?
        var poller = ZMQPoller()
        var wakeIndex = 0
        var monitorIndex = 0
        while !closed {
            if polled != ObjectIdentifier(socket) {  // a new socket after a move
                poller = ZMQPoller()
                poller.add(socket)
                wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
                monitorIndex = poller.add(monitor.socket)
                polled = ObjectIdentifier(socket)
            }
            let now = MonotonicTime.now()
            var wakeAt = max(lastHeard, lastPing) + interval
            if let deadline = rotation.moveDeadline { wakeAt = min(wakeAt, deadline) }
            if let lostSince { wakeAt = min(wakeAt, lostSince + reconnectTimeout) }
            let timeout = wakeAt > now ? Int((wakeAt - now) / 1_000_000) + 1 : 0
            _ = try? poller.poll(timeoutMilliseconds: timeout)
            if poller.isReadable(wakeIndex) { wake.drain() }
            if poller.isReadable(monitorIndex) { checkMonitor() }
            let (commands, isClosed) = inbox.withLock { inbox in
                defer { inbox.commands.removeAll(keepingCapacity: true) }
                return (inbox.commands, inbox.closed)
            }
            closed = isClosed
            if !commands.isEmpty && !isBusy {
                // Idle until now: the broker's silence so far says nothing; start timing from here.
                lastHeard = MonotonicTime.now()
                if lostSince != nil { lostSince = lastHeard }
            }
            for command in commands { execute(command) }
            while (try? socket.receive(into: &buffer)) == true {
                lastHeard = MonotonicTime.now()
                if deliver(&buffer) { lostSince = nil }
            }
            let later = MonotonicTime.now()
            let busy = isBusy
            if busy && later - lastHeard > interval * liveness {
                if lostSince == nil { lostSince = later }
                logger.info(
                    "the broker went silent",
                    metadata: [
                        "broker": "\(rotation.current)", "heartbeats": "\(liveness)",
                        "requests": "\(pending.count)",
                    ])
                move(reason: "the broker was silent for \(liveness) heartbeats")
                lastHeard = later
            } else if rotation.handshakeOverdue(at: later) {
                // No broker here (a standby binds nothing): the client is looking for one. The silence rule still
                // counts from the last message heard.
                if busy && lostSince == nil { lostSince = later }
                move(reason: "no handshake within one heartbeat interval")
            } else if moveRequested && rotation.rotates {
                if busy && lostSince == nil { lostSince = later }
                move(reason: "the broker answered unavailable")
            }
            moveRequested = false
            if let since = lostSince, busy, later - since >= reconnectTimeout {
                let trouble = handshakeTrouble.map { "; the last handshake failed: \($0)" } ?? ""
                failAll(
                    ClientError(
                        code: .connectionLost,
                        message: "no broker answered within \(configuration.reconnectTimeout) "
                            + "(\(rotation.endpoints.joined(separator: ",")))\(trouble)"))
                lostSince = nil
            }
            if later - max(lastHeard, lastPing) >= interval && busy {
                _ = try? ClientMessageEncoder.ping(into: &socket)
                lastPing = later
            }
        }
        failAll(ClientError(code: .closed, message: "the client is closed"))
        let leftover = inbox.withLock { inbox in
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }
        for command in leftover { fail(command, ClientError(code: .closed, message: "the client is closed")) }
        socket.close()
        monitor.close()
        context.terminate()
    }

    /// Whether anything waits for the broker.
    private var isBusy: Bool { !pending.isEmpty || !statusWaiters.isEmpty || !pingWaiters.isEmpty }

    /// Moves to the next endpoint (the same one when there is only one): a new socket with the same routing id and
    /// keys. REQUESTs that never left the old socket are sent again on the new one; the others, and the STATUS and
    /// CANCEL queries of the old connection, are asked about (or sent again) by the sweep once the new connection
    /// completes its handshake.
    private func move(reason: String) {
        let from = rotation.current
        let endpoint = rotation.advance()
        let made: (ZMQSocket, ZMQSocketMonitor)
        do {
            made = try Self.makeSocket(context: context, configuration: configuration, endpoint: endpoint)
        } catch {
            logger.error("cannot connect to the broker", metadata: ["broker": "\(endpoint)", "error": "\(error)"])
            rotation.awaitHandshake(from: MonotonicTime.now())  // try the next one after the window
            return
        }
        socket.close()
        monitor.close()
        (socket, monitor) = made
        rotation.awaitHandshake(from: MonotonicTime.now())
        connection += 1
        reconnecting = true
        established = false
        logger.info(
            rotation.rotates ? "moving to the next broker endpoint" : "reconnecting to the broker on a new connection",
            metadata: [
                "broker": "\(endpoint)", "from": "\(from)", "reason": "\(reason)", "requests": "\(pending.count)",
            ])
        for (id, request) in pending where !request.mayHaveArrived {
            if (try? socket.send(multipart: request.frames)) == true { pending[id]?.sentOn = connection }
        }
    }

    /// Reads the monitor's events. A refusal or a mechanism mismatch fails everything waiting, and later
    /// requests (libzmq gives that connection up); a connection that broke off during the handshake is retried by
    /// libzmq, and only remembered to explain a later `connectionLost`. A handshake that succeeds after a
    /// disconnect starts a sweep (``sweep()``): the broker may be a new one that lost the requests in flight.
    private func checkMonitor() {
        while let event = try? monitor.receive() {
            if event.kind == .disconnected {
                if !reconnecting {
                    logger.debug(
                        "the connection to the broker dropped",
                        metadata: ["broker": "\(rotation.current)", "requests": "\(pending.count)"]
                    )
                }
                let now = MonotonicTime.now()
                rotation.awaitHandshake(from: now)
                if lostSince == nil { lostSince = now }
                established = false
                reconnecting = true
                connection += 1
                continue
            }
            if event.kind == .handshakeSucceeded {
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
                    sweep()
                }
                for id in Array(pending.keys) { pending[id]?.mayHaveArrived = true }
                continue
            }
            let explanation =
                event.handshakeFailureExplanation(
                    usingCurve: configuration.curve != nil, handshakeSucceededBefore: handshakeSucceededBefore)
                ?? (event.kind == .handshakeFailedNoDetail
                    ? "the broker went away during the handshake (stopping or restarting)" : "\(event)")
            if event.kind == .handshakeFailedNoDetail {
                logger.warning(
                    "the connection to the broker broke off during the handshake; retrying",
                    metadata: ["broker": "\(rotation.current)", "reason": "\(explanation)"]
                )
                handshakeTrouble = explanation
                continue
            }
            logger.error(
                "security handshake with the broker failed",
                metadata: ["broker": "\(rotation.current)", "reason": "\(explanation)"]
            )
            let error = ClientError(
                code: .handshakeFailed,
                message: "\(rotation.current): \(explanation)"
            )
            handshakeFailure = error
            failAll(error)
        }
    }

    /// Why nothing can be sent: the failed handshake that made libzmq drop the connection.
    private func connectionGivenUp() -> ClientError {
        checkMonitor()
        return handshakeFailure
            ?? ClientError(
                code: .handshakeFailed,
                message: "\(rotation.current): libzmq closed the connection for good (failed handshake)"
            )
    }

    private func execute(_ command: ConciergeClient.Command) {
        if let handshakeFailure {
            fail(command, handshakeFailure)
            return
        }
        switch command {
        case .request(let id, let serial, let frames, let continuation):
            guard pending[id] == nil else {
                continuation.finish(
                    throwing: ClientError(code: .duplicateRequest, message: "request \(id) is already in flight")
                )
                return
            }
            let throttleKey =
                configuration.throttle == nil && !configuration.heedsPushback ? nil : Self.intentType(of: frames)
            if let throttleKey, let refusal = pushback(throttleKey, id: id) ?? throttle(throttleKey, id: id) {
                continuation.finish(throwing: refusal)
                return
            }
            // Sends never wait: without a high-water mark the DEALER queues while it has a connection pipe, and
            // it has none only once libzmq has given up on the connection (a failed security handshake).
            do {
                guard try socket.send(multipart: frames) else {
                    continuation.finish(throwing: connectionGivenUp())
                    return
                }
                pending[id] = Pending(
                    serial: serial, continuation: continuation, frames: frames, sentOn: connection,
                    mayHaveArrived: established, throttleKey: throttleKey)
            } catch {
                continuation.finish(throwing: ClientError(code: .transport, message: "\(error)"))
            }
        case .status(let id, let continuation):
            if (try? ClientMessageEncoder.status(into: &socket, requestID: id)) == true {
                statusWaiters[id, default: []].append(.caller(continuation, connection: connection))
            } else {
                continuation.resume(throwing: connectionGivenUp())
            }
        case .ping(let continuation):
            if (try? ClientMessageEncoder.ping(into: &socket)) == true {
                pingWaiters.append(continuation)
            } else {
                continuation.resume(throwing: connectionGivenUp())
            }
        case .abandon(let id, let serial):
            // The caller stopped listening: stop the request at the broker, and drop its ending when it comes.
            guard var request = pending[id], request.serial == serial else { return }
            request.continuation = nil
            if !request.cancelSent {
                guard sendCancel(id) else {
                    finish(id, .failure(connectionGivenUp()))
                    return
                }
                request.cancelSent = true
                request.cancelConnection = connection
            }
            pending[id] = request
        case .cancel(let id, let continuation):
            if var request = pending[id] {
                if !request.cancelSent {
                    guard sendCancel(id) else {
                        continuation.resume(throwing: connectionGivenUp())
                        return
                    }
                    request.cancelSent = true
                    request.cancelConnection = connection
                }
                request.cancelWaiters.append(continuation)
                pending[id] = request
            } else if sendCancel(id) {
                statusWaiters[id, default: []].append(.cancel(continuation, connection: connection))
            } else {
                continuation.resume(throwing: connectionGivenUp())
            }
        }
    }

    /// A REQUEST's intent type (F3 of `[signature, REQUEST, id, type, ...]`).
    private static func intentType(of frames: [[UInt8]]) -> String {
        frames.count > 3 ? String(decoding: frames[3], as: UTF8.self) : ""
    }

    /// Asks the throttle of intent type `key` whether to send a new request: nil to send it, else the error that
    /// ends it unsent.
    private func throttle(_ key: String, id: String) -> ClientError? {
        guard let configuration = configuration.throttle else { return nil }
        let now = MonotonicTime.now()
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
    private func pushback(_ key: String, id: String) -> ClientError? {
        guard configuration.heedsPushback, var pushback = pushbacks[key] else { return nil }
        let admitted = pushback.admit(now: MonotonicTime.now())
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
    private func countFirstAnswer(of id: String, _ request: inout Pending, _ reply: Reply) {
        guard let key = request.throttleKey else { return }
        request.throttleKey = nil
        pending[id] = request
        let refused = reply.status == .error && reply.errorCode == WireErrorCode.busy.rawValue
        let now = MonotonicTime.now()
        if let configuration = configuration.throttle {
            throttles[key, default: AdaptiveThrottle(configuration: configuration)].record(
                accepted: !refused, now: now)
        }
        if refused, configuration.heedsPushback, let hint = Pushback.Hint(errorBody: reply.body) {
            pushbacks[key, default: Pushback()].heed(hint, now: now)
        }
    }

    /// Sends `CIPC02 CANCEL <id>` (PROTOCOL.md 4.10.2); false if libzmq gave the connection up.
    private func sendCancel(_ id: String) -> Bool {
        (try? ClientMessageEncoder.cancel(into: &socket, requestID: id)) == true
    }

    /// Ends request `id` (whatever its serial): its stream gets the ending (unless the caller stopped listening),
    /// and so does every caller of ``ConciergeClient/cancel(requestID:)`` waiting for it.
    private func finish(_ id: String, _ ending: Result<Reply, ClientError>) {
        guard let request = pending.removeValue(forKey: id) else { return }
        switch ending {
        case .success(let reply):
            request.continuation?.yield(reply)
            request.continuation?.finish()
            for waiter in request.cancelWaiters { waiter.resume(returning: reply) }
        case .failure(let error):
            request.continuation?.finish(throwing: error)
            for waiter in request.cancelWaiters { waiter.resume(throwing: error) }
        }
    }

    /// Hands a request's ending REPLY to the first ``StatusWaiter/cancel(_:connection:)`` waiting about `id`, if
    /// any. An `unknown-command` error is a broker's answer to a CANCEL it does not know.
    private func answerCancel(_ id: String, with reply: Reply) -> Bool {
        guard var waiters = statusWaiters[id],
            let index = waiters.firstIndex(where: { if case .cancel = $0 { true } else { false } }),
            case .cancel(let continuation, _) = waiters.remove(at: index)
        else { return false }
        statusWaiters[id] = waiters.isEmpty ? nil : waiters
        if reply.errorCode == WireErrorCode.unknownCommand.rawValue {
            continuation.resume(throwing: Self.cancelUnsupported(id))
        } else {
            continuation.resume(returning: reply)
        }
        return true
    }

    private static func cancelUnsupported(_ id: String) -> ClientError {
        ClientError(
            code: .cancelUnsupported,
            message: "request \(id): the broker does not support CANCEL (it answered unknown-command)"
        )
    }

    /// Handles one message from the broker. Returns false for an `unavailable` answer (the broker cannot record
    /// work: the client is still looking for one that can), true otherwise.
    private func deliver(_ message: inout ZMQMultipart) -> Bool {
        let decoded = message.withFrames { views, dropped -> Result<(Reply, BrokerReply.Kind), BrokerReplyError> in
            Result { () throws(BrokerReplyError) in
                let reply = try BrokerReplyDecoder().decode(WireFrames(views, dropped: dropped))
                return (Reply(reply), reply.kind)
            }
        }
        let reply: Reply
        let kind: BrokerReply.Kind
        switch decoded {
        case .success(let decoded): (reply, kind) = decoded
        case .failure(let error):
            logger.warning("ignored a malformed message from the broker", metadata: ["error": "\(error)"])
            return true
        }
        if kind == .pong {
            for waiter in pingWaiters { waiter.resume() }
            pingWaiters.removeAll()
            return true
        }
        let unavailable = reply.errorCode == WireErrorCode.unavailable.rawValue
        if unavailable {
            // Nothing was accepted: the caller gets the error (a retry is always safe), and the client moves on.
            logger.info(
                "the broker is unavailable (it cannot record work)",
                metadata: ["broker": "\(rotation.current)", "request": "\(reply.requestID)"])
            moveRequested = true
        }
        deliver(reply, id: reply.requestID, isStatus: kind == .status)
        return !unavailable
    }

    private func deliver(_ reply: Reply, id: String, isStatus: Bool) {
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
            case .caller(let continuation, _): continuation.resume(returning: reply)
            case .cancel(let continuation, _): continuation.resume(returning: reply)
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
            logger.warning(
                "the broker does not support CANCEL", metadata: ["broker": "\(rotation.current)"])
            for waiter in request.cancelWaiters { waiter.resume(throwing: Self.cancelUnsupported(id)) }
            request.cancelWaiters.removeAll()
            pending[id] = request
            return
        }
        if request.throttleKey != nil { countFirstAnswer(of: id, &request, reply) }
        if reply.isFinal {
            finish(id, .success(reply))
        } else {
            request.continuation?.yield(reply)
        }
    }

    /// After the connection came back: asks STATUS (PROTOCOL.md 4.3) about every request in flight, because the
    /// broker at the other end may be a new one that never heard of them (libzmq reconnects silently, and a new
    /// broker answers PING like the old one). Sent after any REQUEST still queued, so the broker has seen every
    /// request it is asked about, unless it lost it. STATUS queries of callers sent on an earlier connection may
    /// be lost with it and are asked again; a sweep's queries from an earlier reconnect are replaced. Extra
    /// answers are harmless: an answer nobody waits for is ignored.
    private func sweep() {
        for (id, waiters) in statusWaiters {
            var kept: [StatusWaiter] = []
            for waiter in waiters {
                switch waiter {
                case .sweep: continue
                case .caller(let continuation, let sentOn):
                    if sentOn < connection {
                        _ = try? ClientMessageEncoder.status(into: &socket, requestID: id)
                    }
                    kept.append(.caller(continuation, connection: connection))
                case .cancel(let continuation, let sentOn):
                    if sentOn < connection { _ = sendCancel(id) }
                    kept.append(.cancel(continuation, connection: connection))
                }
            }
            statusWaiters[id] = kept.isEmpty ? nil : kept
        }
        // A PING of the lost connection may be lost with it.
        if !pingWaiters.isEmpty { _ = try? ClientMessageEncoder.ping(into: &socket) }
        guard !pending.isEmpty else { return }
        logger.debug(
            "reconnected to the broker; asking it about the requests in flight",
            metadata: ["broker": "\(rotation.current)", "requests": "\(pending.count)"]
        )
        // A REQUEST sent on this connection (queued while it was down, or sent again after a move) reaches this
        // broker in order: nothing to ask about it.
        for (id, request) in pending
        where request.sentOn < connection && (try? ClientMessageEncoder.status(into: &socket, requestID: id)) == true {
            statusWaiters[id, default: []].append(.sweep(serial: request.serial))
        }
        // A CANCEL sent on the lost connection may be lost with it: send it again (after the STATUS, so that a new
        // broker's `unknown-request` answers the sweep).
        for (id, request) in pending where request.cancelSent && request.cancelConnection < connection {
            if sendCancel(id) { pending[id]?.cancelConnection = connection }
        }
    }

    /// The broker's STATUS answer to the sweep about request `id` (if it is still the request with `serial`):
    /// `progress` keeps it waiting; `final` or `error` is its ending (its REPLY, if one comes too, is ignored);
    /// `unknown-request` ends it with ``ClientError/Code/brokerRestarted``.
    private func settle(_ id: String, serial: UInt64, with reply: Reply) {
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

    private func failAll(_ error: ClientError) {
        for id in Array(pending.keys) { finish(id, .failure(error)) }
        for waiters in statusWaiters.values {
            for waiter in waiters {
                switch waiter {
                case .caller(let continuation, _), .cancel(let continuation, _): continuation.resume(throwing: error)
                case .sweep: break
                }
            }
        }
        statusWaiters.removeAll()
        for waiter in pingWaiters { waiter.resume(throwing: error) }
        pingWaiters.removeAll()
    }
}
