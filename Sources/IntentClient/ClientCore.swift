import ConciergeJSON
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The client's socket loop (one thread owns the socket).
final class ClientCore: @unchecked Sendable {
    let configuration: ClientConfiguration
    let logger: Logger
    private let context = ZMQContext()
    private let socket: ZMQSocket
    /// Reports failed security handshakes (a refused CURVE key, a CURVE/plain mismatch), which libzmq does not retry.
    private let monitor: ZMQSocketMonitor
    private let wake = EventFD()
    private let inbox = Mutex<(commands: [ConciergeClient.Command], closed: Bool)>(([], false))

    // Loop-thread state
    private var pending: [String: ConciergeClient.ReplyStream.Continuation] = [:]
    private var statusWaiters: [String: [CheckedContinuation<Reply, any Error>]] = [:]
    private var pingWaiters: [CheckedContinuation<Void, any Error>] = []
    /// Set once a security handshake failed for good (refused key, mechanism mismatch): libzmq does not retry, so
    /// requests fail at once with it.
    private var handshakeFailure: ClientError?
    /// Why the last handshake broke off, when libzmq retries it (the connection closed during the handshake).
    private var handshakeTrouble: String?

    init(configuration: ClientConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        do {
            socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.routingID, string: configuration.routingID)
            try socket.setOption(.sendHighWaterMark, 0)
            try socket.setOption(.receiveHighWaterMark, 0)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            monitor = try ZMQSocketMonitor(
                context: context, watching: socket,
                events: ZMQMonitorEvent.Kind.handshakeFailures.union(.handshakeSucceeded)
            )
            try socket.connect(configuration.brokerEndpoint)
        } catch {
            throw ClientError(code: .transport, message: "\(configuration.brokerEndpoint): \(error)")
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
        case .request(_, _, let continuation): continuation.finish(throwing: error)
        case .status(_, let continuation): continuation.resume(throwing: error)
        case .ping(let continuation): continuation.resume(throwing: error)
        case .cancel: break
        }
    }

    func run() {
        var poller = ZMQPoller()
        poller.add(socket)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        let monitorIndex = poller.add(monitor.socket)
        var buffer = ZMQMultipart(capacity: 16)
        let interval = configuration.heartbeatInterval.nanoseconds
        let liveness = UInt64(max(1, configuration.heartbeatLiveness))
        var lastHeard = MonotonicTime.now()
        var lastPing: UInt64 = 0
        var closed = false
        while !closed {
            let now = MonotonicTime.now()
            let nextPing = max(lastHeard, lastPing) + interval
            let timeout = nextPing > now ? Int((nextPing - now) / 1_000_000) + 1 : 0
            _ = try? poller.poll(timeoutMilliseconds: timeout)
            if poller.isReadable(wakeIndex) { wake.drain() }
            if poller.isReadable(monitorIndex) { checkHandshakes() }
            let (commands, isClosed) = inbox.withLock { inbox in
                defer { inbox.commands.removeAll(keepingCapacity: true) }
                return (inbox.commands, inbox.closed)
            }
            closed = isClosed
            if !commands.isEmpty && pending.isEmpty && statusWaiters.isEmpty && pingWaiters.isEmpty {
                // Idle until now: the broker's silence so far says nothing; start timing from here.
                lastHeard = MonotonicTime.now()
            }
            for command in commands { execute(command) }
            while (try? socket.receive(into: &buffer)) == true {
                lastHeard = MonotonicTime.now()
                deliver(&buffer)
            }
            let later = MonotonicTime.now()
            let busy = !pending.isEmpty || !statusWaiters.isEmpty || !pingWaiters.isEmpty
            if busy && later - lastHeard > interval * liveness {
                let trouble = handshakeTrouble.map { "; the last handshake failed: \($0)" } ?? ""
                failAll(ClientError(code: .connectionLost, message: "the broker stopped answering\(trouble)"))
                lastHeard = later
            }
            if later - max(lastHeard, lastPing) >= interval && busy {
                _ = try? socket.send(multipart: [CIP.clientSignature.bytes, CIP.Client.ping.bytes])
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

    /// Reads the monitor's handshake events. A refusal or a mechanism mismatch fails everything waiting, and later
    /// requests (libzmq gives that connection up); a connection that broke off during the handshake is retried by
    /// libzmq, and only remembered to explain a later `connectionLost`.
    private func checkHandshakes() {
        while let event = try? monitor.receive() {
            if event.kind == .handshakeSucceeded {
                handshakeFailure = nil
                handshakeTrouble = nil
                continue
            }
            let explanation =
                event.handshakeFailureExplanation(usingCurve: configuration.curve != nil) ?? "\(event)"
            if event.kind == .handshakeFailedNoDetail {
                logger.warning(
                    "the connection to the broker broke off during the handshake; retrying",
                    metadata: ["broker": "\(configuration.brokerEndpoint)", "reason": "\(explanation)"]
                )
                handshakeTrouble = explanation
                continue
            }
            logger.error(
                "security handshake with the broker failed",
                metadata: ["broker": "\(configuration.brokerEndpoint)", "reason": "\(explanation)"]
            )
            let error = ClientError(
                code: .handshakeFailed,
                message: "\(configuration.brokerEndpoint): \(explanation)"
            )
            handshakeFailure = error
            failAll(error)
        }
    }

    /// Why nothing can be sent: the failed handshake that made libzmq drop the connection.
    private func connectionGivenUp() -> ClientError {
        checkHandshakes()
        return handshakeFailure
            ?? ClientError(
                code: .handshakeFailed,
                message: "\(configuration.brokerEndpoint): libzmq closed the connection for good (failed handshake)"
            )
    }

    private func execute(_ command: ConciergeClient.Command) {
        if let handshakeFailure {
            fail(command, handshakeFailure)
            return
        }
        switch command {
        case .request(let id, let frames, let continuation):
            guard pending[id] == nil else {
                continuation.finish(
                    throwing: ClientError(code: .duplicateRequest, message: "request \(id) is already in flight")
                )
                return
            }
            // Sends never wait: without a high-water mark the DEALER queues while it has a connection pipe, and
            // it has none only once libzmq has given up on the connection (a failed security handshake).
            do {
                guard try socket.send(multipart: frames) else {
                    continuation.finish(throwing: connectionGivenUp())
                    return
                }
                pending[id] = continuation
            } catch {
                continuation.finish(throwing: ClientError(code: .transport, message: "\(error)"))
            }
        case .status(let id, let continuation):
            let frames = [CIP.clientSignature.bytes, CIP.Client.status.bytes, Array(id.utf8)]
            if (try? socket.send(multipart: frames)) == true {
                statusWaiters[id, default: []].append(continuation)
            } else {
                continuation.resume(throwing: connectionGivenUp())
            }
        case .ping(let continuation):
            if (try? socket.send(multipart: [CIP.clientSignature.bytes, CIP.Client.ping.bytes])) == true {
                pingWaiters.append(continuation)
            } else {
                continuation.resume(throwing: connectionGivenUp())
            }
        case .cancel(let id):
            pending[id] = nil
        }
    }

    private func deliver(_ message: inout ZMQMultipart) {
        guard message.count >= 2, message.withBytes(0, { CIP.clientSignature.matches($0) }) else {
            logger.warning("ignored a malformed message from the broker")
            return
        }
        if message.equals(1, CIP.Broker.pong) {
            for waiter in pingWaiters { waiter.resume() }
            pingWaiters.removeAll()
            return
        }
        guard message.count == 6 else {
            logger.warning("ignored a reply with \(message.count) frames")
            return
        }
        let id = message.string(2)
        let status: Reply.Status
        if message.equals(3, CIP.Status.final) {
            status = .final
        } else if message.equals(3, CIP.Status.progress) {
            status = .progress
        } else {
            status = .error
        }
        let reply = Reply(requestID: id, status: status, phase: message.string(4), body: message.bytes(5))
        if message.equals(1, CIP.Broker.status) {
            if var waiters = statusWaiters[id], !waiters.isEmpty {
                waiters.removeFirst().resume(returning: reply)
                statusWaiters[id] = waiters.isEmpty ? nil : waiters
            }
            return
        }
        guard let continuation = pending[id] else {
            if id.isEmpty {
                logger.warning("broker error without request id", metadata: ["body": "\(reply.json ?? .null)"])
            }
            return
        }
        continuation.yield(reply)
        if reply.isFinal {
            pending[id] = nil
            continuation.finish()
        }
    }

    private func failAll(_ error: ClientError) {
        for continuation in pending.values { continuation.finish(throwing: error) }
        pending.removeAll()
        for waiters in statusWaiters.values { for waiter in waiters { waiter.resume(throwing: error) } }
        statusWaiters.removeAll()
        for waiter in pingWaiters { waiter.resume(throwing: error) }
        pingWaiters.removeAll()
    }
}
