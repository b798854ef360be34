import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The client's socket loop (one thread owns the socket): it polls the connection, its monitor and the callers'
/// inbox, decodes the broker's messages, hands everything to the client's rules (``ClientStateMachine``), and
/// performs what they ask of the callers' continuations. Nothing else: the rules are in the state machine.
final class ClientCore: @unchecked Sendable {
    typealias Machine = ClientStateMachine<
        ReplySink, CheckedContinuation<Reply, any Error>, CheckedContinuation<Void, any Error>
    >

    let configuration: ClientConfiguration
    let logger: Logger
    private let context = ZMQContext()
    private let wake = EventFD()
    private let inbox = Mutex<(commands: [ConciergeClient.Command], closed: Bool)>(([], false))
    /// The machine's ``ClientStateMachine/isConnected``, published by the loop after each turn.
    private let connected = Atomic<Bool>(false)
    // Loop-thread state.
    private var connection: ClientSocketConnection
    private var machine: Machine

    init(configuration: ClientConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        guard let first = configuration.brokerEndpoints.first else {
            throw ClientError(code: .transport, message: "no broker endpoint")
        }
        connection = try ClientSocketConnection(
            context: context, configuration: configuration, logger: logger, endpoint: first)
        machine = Machine(configuration: configuration, logger: logger, now: MonotonicTime.now())
    }

    func submit(_ command: ConciergeClient.Command) {
        // The loop takes the whole inbox at once: only the command that finds it empty needs to wake it (one
        // eventfd write per batch, not per command, under load).
        let accepted = inbox.withLock { inbox -> Bool? in
            guard !inbox.closed else { return nil }
            inbox.commands.append(command)
            return inbox.commands.count == 1
        }
        if let first = accepted {
            if first { wake.signal() }
        } else {
            Self.fail(command, ClientError(code: .closed, message: "the client is closed"))
        }
    }

    /// Whether the client is connected to a broker (``ClientStateMachine/isConnected``).
    var isConnected: Bool { connected.load(ordering: .relaxed) }

    func close() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.closed = true }
            return !inbox.closed
        }
        if first { wake.signal() }
    }

    /// Ends a command the loop will never see.
    private static func fail(_ command: ConciergeClient.Command, _ error: ClientError) {
        switch command {
        case .request(_, _, _, let sink), .turn(_, _, _, _, let sink):
            sink.finish(throwing: error)
        case .status(_, let continuation), .cancel(_, let continuation), .conversation(_, _, let continuation):
            continuation.resume(throwing: error)
        case .ping(let continuation): continuation.resume(throwing: error)
        case .abandon: break
        }
    }

    func run() {
        var buffer = ZMQMultipart(capacity: 16)
        var taken: [ConciergeClient.Command] = []
        var closed = false
        var polled: ObjectIdentifier?
        var poller = ZMQPoller()
        var wakeIndex = 0
        var monitorIndex = 0
        while !closed {
            if polled != ObjectIdentifier(connection.socket) {  // a new socket after a move
                poller = ZMQPoller()
                poller.add(connection.socket)
                wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
                monitorIndex = poller.add(connection.monitor.socket)
                polled = ObjectIdentifier(connection.socket)
            }
            let now = MonotonicTime.now()
            let wakeAt = machine.wakeTime
            // At most a minute at a time: an idle machine has nothing to wake for (wakeTime is far off), and a
            // caller's command wakes the loop through `wake` anyway.
            let timeout = wakeAt > now ? Int(min((wakeAt - now) / 1_000_000, 60_000)) + 1 : 0
            _ = try? poller.poll(timeoutMilliseconds: timeout)
            if poller.isReadable(wakeIndex) { wake.drain() }
            if poller.isReadable(monitorIndex) {
                while let event = connection.nextEvent(handshakeSucceededBefore: machine.handshakeSucceededBefore) {
                    machine.connectionEvent(event, now: MonotonicTime.now(), connection: &connection)
                }
                perform()
            }
            // The inbox and `taken` trade buffers: no allocation per turn.
            closed = inbox.withLock { inbox in
                swap(&taken, &inbox.commands)
                return inbox.closed
            }
            if !taken.isEmpty {
                machine.commands(taken.map(Self.machineCommand), now: MonotonicTime.now(), connection: &connection)
                taken.removeAll(keepingCapacity: true)
                perform()
            }
            while (try? connection.socket.receive(into: &buffer)) == true {
                receive(&buffer, now: MonotonicTime.now())
                perform()
            }
            machine.tick(now: MonotonicTime.now(), connection: &connection)
            perform()
            connected.store(machine.isConnected, ordering: .relaxed)
        }
        connected.store(false, ordering: .relaxed)
        machine.close()
        perform()
        let leftover = inbox.withLock { inbox in
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }
        for command in leftover { Self.fail(command, ClientError(code: .closed, message: "the client is closed")) }
        connection.close()
        context.terminate()
    }

    /// Decodes one message from the broker (IntentWire's reply decoder) and hands it to the machine.
    private func receive(_ message: inout ZMQMultipart, now: UInt64) {
        let decoded = message.withFrames { views, dropped -> Result<(Reply?, BrokerReply.Kind), BrokerReplyError> in
            Result { () throws(BrokerReplyError) in
                let reply = try BrokerReplyDecoder().decode(WireFrames(views, dropped: dropped))
                return (reply.kind == .pong ? nil : Reply(reply), reply.kind)
            }
        }
        switch decoded {
        case .success(let (reply?, .conversation)):
            machine.receivedConversation(reply, now: now)
        case .success(let (reply, kind)):
            machine.received(reply, isStatus: kind == .status, now: now)
        case .failure(let error):
            logger.warning("ignored a malformed message from the broker", metadata: ["error": "\(error)"])
            machine.receivedMalformed(now: now)
        }
    }

    /// Performs the machine's actions: replies and endings to the callers.
    private func perform() {
        guard !machine.actions.isEmpty else { return }
        let actions = machine.actions
        machine.actions.removeAll(keepingCapacity: true)
        for action in actions {
            switch action {
            case .yield(let sink, let reply): sink.yield(reply)
            case .finish(let sink, let error): sink.finish(throwing: error)
            case .resume(let waiter, .success(let reply)): waiter.resume(returning: reply)
            case .resume(let waiter, .failure(let error)): waiter.resume(throwing: error)
            case .resumePing(let waiter, nil): waiter.resume()
            case .resumePing(let waiter, let error?): waiter.resume(throwing: error)
            }
        }
    }

    /// A caller's command as the machine takes it.
    private static func machineCommand(_ command: ConciergeClient.Command) -> Machine.Command {
        switch command {
        case .request(let id, let serial, let frames, let continuation):
            .request(id: id, serial: serial, frames: frames, stream: continuation)
        case .status(let id, let continuation): .status(id: id, waiter: continuation)
        case .ping(let continuation): .ping(continuation)
        case .abandon(let id, let serial): .abandon(id: id, serial: serial)
        case .cancel(let id, let continuation): .cancel(id: id, waiter: continuation)
        case .turn(let id, let serial, let frames, let intentType, let continuation):
            .turn(id: id, serial: serial, frames: frames, intentType: intentType, stream: continuation)
        case .conversation(let id, let end, let continuation):
            .conversation(id: id, end: end, waiter: continuation)
        }
    }
}
