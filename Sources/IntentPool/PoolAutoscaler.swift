import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// Asks the broker a pool serves for its load once a second (`CIPW02 STATS`, PROTOCOL.md 5.14, on a DEALER of its
/// own to the workers' backend endpoint, with the workers' CURVE keys), keeps what it learnt for the pool's metrics
/// and `status`, and, when the pool scales itself, feeds each answer to an ``AutoscalePolicy`` and performs its
/// decision: grow by one slot, or stop one idle worker (SIGTERM: it drains and exits; never SIGKILL).
///
/// With several broker endpoints it follows the active broker as the workers do: after 3 polls without an answer it
/// moves to the next endpoint (a standby binds nothing, so it never answers).
public final class PoolAutoscaler: @unchecked Sendable {
    /// What the pool knows of its broker and its autoscaling, for `status` and metrics.
    public struct Status: Sendable, Equatable {
        /// The endpoint asked now, and whether its last poll was answered.
        public var endpoint: String
        public var answered = false
        /// Jobs the pool's workers hold, as the last answer said (0 without one).
        public var jobsInProgress = 0
        /// Requests queued for the intent types the pool's workers serve, as the last answer said.
        public var queued = 0
        /// Autoscaling limits (nil: the pool does not scale itself), the last decision and its reason.
        public var minimum: Int?
        public var maximum: Int?
        public var lastDecision = ""
        public var steps = 0
    }

    private unowned let pool: WorkerPool
    private let broker: PoolBrokerLink
    private let logger: Logger
    private let context = ZMQContext()
    private let state: Mutex<Status>
    /// Whether the loop has warned of an answer other than STATS (loop thread only).
    private var warnedOfOtherAnswers = false

    init(pool: WorkerPool, broker: PoolBrokerLink) {
        self.pool = pool
        self.broker = broker
        logger = pool.logger
        var status = Status(endpoint: broker.endpoints.first ?? "")
        status.minimum = broker.autoscale?.minimum
        status.maximum = broker.autoscale?.maximum
        state = Mutex(status)
    }

    /// The last answer's figures and the last decision.
    public var status: Status { state.withLock { $0 } }

    func run() async {
        await withTaskCancellationHandler {
            await SocketThread.run(name: "concierge-pool-stats") { self.loop() }
        } onCancel: {
            context.shutdown()
        }
    }

    /// Ends the loop.
    func stop() { context.shutdown() }

    private func makeSocket(_ endpoint: String) -> ZMQSocket? {
        do {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.linger, 0)
            // Queries are not queued while there is no connection: an old one would be answered late.
            try socket.setOption(.immediate, 1)
            if let curve = broker.curve { try socket.makeCurveClient(curve) }
            try socket.connect(endpoint)
            return socket
        } catch {
            logger.error("cannot ask the broker for STATS", metadata: ["broker": "\(endpoint)", "error": "\(error)"])
            return nil
        }
    }

    private func loop() {
        var policy = broker.autoscale.map { AutoscalePolicy(configuration: $0) }
        var index = 0
        var misses = 0
        var socket = makeSocket(broker.endpoints[index])
        var lastLogged = ""
        let interval = broker.pollInterval.nanoseconds
        var next = MonotonicTime.now()
        while let current = socket {
            // Ask, and wait for the answer until the next poll is due. Decisions are timed on the polls' grid (one
            // per interval), so a step interval of 2 polls is not missed by a millisecond of jitter.
            let tick = next
            next += interval
            var stats: BrokerStats?
            do {
                while (try current.receiveMultipart(dontWait: true)) != nil {}  // late answers
                var sink = current
                if try WorkerMessageEncoder.statsQuery(into: &sink, version: 2) {
                    stats = try receiveStats(current, until: next)
                }
            } catch {
                break  // the context was shut down: the pool stops
            }
            misses = stats == nil ? misses + 1 : 0
            let slots = pool.wantedSlots
            let decision = policy?.decide(stats: stats, slots: slots, now: tick)
            // The jobs of all the pool's workers, those draining after a scale-down included.
            let names = pool.workerNames
            let mine = stats?.workers.filter { names.contains($0.name) } ?? []
            let served = Set(mine.flatMap(\.intents))
            state.withLock { status in
                status.answered = stats != nil
                status.jobsInProgress = mine.reduce(0) { $0 + $1.jobs }
                status.queued = stats?.intentTypes.filter { served.contains($0.name) }.reduce(0) { $0 + $1.queued } ?? 0
                if let decision { status.lastDecision = decision.reason }
            }
            if let decision { perform(decision, size: slots.count, lastLogged: &lastLogged) }
            if misses >= 3, broker.endpoints.count > 1 {
                // No answer: this may be a standby (it binds nothing). Move on, as the workers do.
                current.close()
                index = (index + 1) % broker.endpoints.count
                misses = 0
                socket = makeSocket(broker.endpoints[index])
                state.withLock { $0.endpoint = broker.endpoints[index] }
            }
            // Until the next poll (an answer may have come early).
            let now = MonotonicTime.now()
            if next > now {
                var poller = ZMQPoller()
                guard let socket else { break }
                poller.add(socket)
                do {
                    try poller.poll(timeoutMilliseconds: Int((next - now) / 1_000_000))
                } catch {
                    break
                }
            } else {
                next = now
            }
        }
        socket?.close()
        context.terminate()
    }

    /// Waits until `deadline` (monotonic ns) for the answer to STATS; other messages (ERROR, DISCONNECT) are
    /// logged and skipped. Nil without an answer in time.
    private func receiveStats(_ socket: ZMQSocket, until deadline: UInt64) throws(ZMQError) -> BrokerStats? {
        var poller = ZMQPoller()
        poller.add(socket)
        while true {
            let now = MonotonicTime.now()
            guard deadline > now else { return nil }
            guard try poller.poll(timeoutMilliseconds: Int((deadline - now) / 1_000_000) + 1) > 0 else { continue }
            guard let frames = try socket.receiveMultipart(dontWait: true) else { continue }
            guard frames.count == 3, frames[1] == CIP.Worker.stats.bytes else {
                // E.g. a broker older than STATS answers DISCONNECT: say so once, not every second.
                let words = frames.dropFirst().prefix(3).map { String(decoding: $0.prefix(64), as: UTF8.self) }
                let level: Logger.Level = warnedOfOtherAnswers ? .debug : .warning
                warnedOfOtherAnswers = true
                logger.log(
                    level: level, "the broker answered STATS with something else (does it speak CIPW02 STATS?)",
                    metadata: ["answer": "\(words)"])
                continue
            }
            do {
                return try BrokerStats(parsing: frames[2])
            } catch {
                logger.warning("unreadable STATS answer", metadata: ["error": "\(error)"])
                return nil
            }
        }
    }

    private func perform(_ decision: AutoscalePolicy.Decision, size: Int, lastLogged: inout String) {
        switch decision {
        case .grow(let reason):
            pool.resize(to: size + 1)
            state.withLock { $0.steps += 1 }
            logger.info("autoscale: grow", metadata: ["workers": "\(size + 1)", "reason": "\(reason)"])
        case .shrink(let slot, let reason):
            let name = pool.workerName(slot: slot)
            if pool.stop(slot: slot) {
                state.withLock { $0.steps += 1 }
                logger.info(
                    "autoscale: shrink",
                    metadata: ["workers": "\(size - 1)", "stopping": "\(name)", "reason": "\(reason)"])
            }
        case .hold(let reason):
            // Every decision is logged: a hold at debug level, and at info when its kind changes (its words without
            // the figures), so an operator sees why the pool does not move without a line per second.
            let kind = String(reason.filter { !$0.isNumber })
            if kind != lastLogged {
                lastLogged = kind
                logger.info("autoscale: hold", metadata: ["workers": "\(size)", "reason": "\(reason)"])
            } else {
                logger.debug("autoscale: hold", metadata: ["workers": "\(size)", "reason": "\(reason)"])
            }
        }
        if case .hold = decision {} else { lastLogged = "" }
    }
}
