import IntentWire
import Logging
import ZeroMQ

/// The client's connection to a broker: a DEALER with the client's routing id and CURVE keys, and its monitor,
/// which reports failed security handshakes (a refused CURVE key, a CURVE/plain mismatch; libzmq does not retry
/// them) and the connection dropping and coming back (which may be a restarted broker). One pair per endpoint
/// visited: a move replaces both.
struct ClientSocketConnection: ClientConnection {
    let context: ZMQContext
    let configuration: ClientConfiguration
    let logger: Logger
    /// The socket to the endpoint in use.
    private(set) var socket: ZMQSocket
    private(set) var monitor: ZMQSocketMonitor

    /// A connection to `endpoint`.
    init(context: ZMQContext, configuration: ClientConfiguration, logger: Logger, endpoint: String) throws(ClientError)
    {
        self.context = context
        self.configuration = configuration
        self.logger = logger
        (socket, monitor) = try Self.makeSocket(context: context, configuration: configuration, endpoint: endpoint)
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

    func append(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool {
        try socket.send(bytes, more: more)
    }

    func append(body: ZMQMessage, more: Bool) throws(ZMQError) -> Bool {
        try socket.send(body, more: more)
    }

    mutating func reconnect(to endpoint: String) -> Bool {
        do {
            let made = try Self.makeSocket(context: context, configuration: configuration, endpoint: endpoint)
            socket.close()
            monitor.close()
            (socket, monitor) = made
            return true
        } catch {
            logger.error("cannot connect to the broker", metadata: ["broker": "\(endpoint)", "error": "\(error)"])
            return false
        }
    }

    mutating func takeEvents(handshakeSucceededBefore: Bool) -> [ClientConnectionEvent] {
        var events: [ClientConnectionEvent] = []
        while let event = nextEvent(handshakeSucceededBefore: handshakeSucceededBefore) { events.append(event) }
        return events
    }

    /// The monitor's next event, if one is waiting.
    func nextEvent(handshakeSucceededBefore: Bool) -> ClientConnectionEvent? {
        guard let event = try? monitor.receive() else { return nil }
        switch event.kind {
        case .disconnected: return .disconnected
        case .handshakeSucceeded: return .handshakeSucceeded
        default:
            let explanation =
                event.handshakeFailureExplanation(
                    usingCurve: configuration.curve != nil, handshakeSucceededBefore: handshakeSucceededBefore)
                ?? (event.kind == .handshakeFailedNoDetail
                    ? "the broker went away during the handshake (stopping or restarting)" : "\(event)")
            return event.kind == .handshakeFailedNoDetail
                ? .handshakeBrokeOff(explanation) : .handshakeFailed(explanation)
        }
    }

    /// Closes the socket and its monitor.
    func close() {
        socket.close()
        monitor.close()
    }
}
