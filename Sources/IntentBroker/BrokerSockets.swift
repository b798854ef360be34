import IntentWire
import Logging
import ZeroMQ

/// The broker's libzmq context, its two ROUTER sockets (frontend for clients, backend for workers) and, with CURVE,
/// its ZAP handler: created and bound together, closed together in the right order.
struct BrokerSockets: @unchecked Sendable {
    let context: ZMQContext
    let frontend: ZMQSocket
    let backend: ZMQSocket
    /// With CURVE: the ZAP handler that admits listed keys only.
    let zap: ZAPHandler?
    /// The endpoints actually bound (ephemeral ports resolved).
    let frontendEndpoint: String
    let backendEndpoint: String

    /// Messages libzmq holds for the loop per client connection (its receive high-water mark).
    static let clientReceiveQueue: Int32 = 1000

    /// `ZMQ_ROUTER_HANDOVER`: on without permissions (a restarted peer takes its id over at once), off with them (a
    /// second connection with a live id is never given it: libzmq leaves it unidentified, and it neither sends nor
    /// receives until it connects again).
    static func handover(permissions: Bool) -> Int32 { permissions ? 0 : 1 }

    /// Sets `ZMQ_ROUTER_HANDOVER` on both sockets for what connects next (new permissions put in force or removed).
    func setHandover(permissions: Bool) {
        for socket in [frontend, backend] {
            try? socket.setOption(.routerHandover, Self.handover(permissions: permissions))
        }
    }

    init(configuration: BrokerConfiguration, logger: Logger) throws(BrokerError) {
        // Sockets first in locals: if anything fails, they are closed before the context is terminated
        // (zmq_ctx_term waits for every open socket, so the other order would hang instead of failing).
        let context = ZMQContext(ioThreads: configuration.ioThreads)
        var created: [ZMQSocket] = []
        var zap: ZAPHandler?
        func fail(_ code: BrokerError.Code, _ message: String) -> BrokerError {
            for socket in created { socket.close() }
            zap?.stop()
            context.terminate()
            return BrokerError(code: code, message: message)
        }
        // CURVE: the ZAP handler binds before the sockets it guards (with no handler, libzmq admits every key).
        if let curve = configuration.curve {
            do {
                zap = try ZAPHandler(context: context, curve: curve, logger: logger)
                zap?.start()
            } catch {
                throw fail(.badConfiguration, "ZAP handler: \(error)")
            }
        }
        do {
            for index in 0..<2 {
                let socket = try ZMQSocket(context: context, type: .router)
                created.append(socket)
                if let curve = configuration.curve {
                    let domain = index == 0 ? ZAPHandler.clientDomain : ZAPHandler.workerDomain
                    try socket.makeCurveServer(secretKey: curve.secretKey, zapDomain: domain)
                }
                // Never drop a message silently (libzmq#2037) and let a restarted peer take over its id (#4603), unless
                // permissions are in force: then a live id is its owner's alone (Docs/PERMISSIONS.md, "Bound names").
                try socket.setOption(.routerMandatory, 1)
                try socket.setOption(.routerHandover, Self.handover(permissions: configuration.permissions != nil))
                if configuration.permissions != nil {
                    // ZMTP heartbeats free the id of a peer whose host vanished (no FIN) within the liveness window
                    // (at least 2 s), so that it can connect again from elsewhere with handover off.
                    let interval = configuration.heartbeatInterval.milliseconds
                    try socket.setOption(.heartbeatInterval, Int32(clamping: interval))
                    try socket.setOption(
                        .heartbeatTimeout,
                        Int32(clamping: max(2000, interval * max(1, configuration.heartbeatLiveness))))
                }
                try socket.setOption(
                    .sendHighWaterMark, index == 0 ? Int32(clamping: max(1, configuration.clientQueueLimit)) : 100_000)
                // A client connection may have at most 1,000 messages read off its TCP connection and not yet taken
                // by the loop; past that libzmq stops reading it, and the rest of a burst waits in the kernel's
                // buffers and the client's queue. So one client's burst of 50,000 cannot put 50,000 messages ahead
                // of the loop at once: the loop's busy stretches stay short and other clients' messages never
                // wait behind them (a well-behaved client's max first reply beside a 50k flood: 15-28 ms with
                // 100,000, 8-15 ms with 1,000; PROFILES.md, "A flood does not hold the other socket back").
                try socket.setOption(.receiveHighWaterMark, index == 0 ? Self.clientReceiveQueue : 100_000)
                // libzmq's own cap on a frame (it disconnects a peer that sends a larger one), above ours by
                // default, so that an oversized body still gets a `too-large` reply.
                try socket.setOption(.maxMessageSize, int64: Int64(configuration.transportFrameLimit))
            }
        } catch {
            throw fail(.badConfiguration, "\(error)")
        }
        for endpoint in [configuration.frontendEndpoint, configuration.backendEndpoint]
        where IPCEndpointCheck.isInUse(endpoint) {
            throw fail(.bindFailed, "\(endpoint) is in use by another process (something is listening on it)")
        }
        do {
            try created[0].bind(configuration.frontendEndpoint)
        } catch {
            throw fail(.bindFailed, "frontend \(configuration.frontendEndpoint): \(error)")
        }
        do {
            try created[1].bind(configuration.backendEndpoint)
        } catch {
            throw fail(.bindFailed, "backend \(configuration.backendEndpoint): \(error)")
        }
        self.context = context
        self.zap = zap
        frontend = created[0]
        backend = created[1]
        frontendEndpoint = frontend.lastEndpoint
        backendEndpoint = backend.lastEndpoint
    }

    /// Closes the sockets, then the ZAP handler that guards them, then the context.
    func close() {
        frontend.close()
        backend.close()
        zap?.stop()
        context.terminate()
    }
}
