import IntentKit
import IntentWire

/// The worker's rules, without sockets, threads or tasks: registration and its backoff, the broker's liveness and
/// the worker's heartbeats, the move to another broker endpoint, draining, and the accounting of jobs and their
/// RESULTs across connections (`Schemas/PROTOCOL.md` sections 5 and 7.1).
///
/// ``WorkerLoop`` owns the socket, the monitor and the tasks that run jobs; it tells the session what happened (a
/// connection made, a handshake, a message, a result ready, the time) and does what the session answers. Every
/// rule is therefore testable with plain values (`WorkerSessionTests`).
struct WorkerSession {
    /// The intervals the rules use, in nanoseconds of ``MonotonicTime``.
    struct Timing: Sendable {
        /// Between two HEARTBEATs of the worker.
        var heartbeat: UInt64
        /// How long the broker may stay silent: heartbeat × liveness (at least one heartbeat).
        var brokerSilence: UInt64
        /// The first reconnection delay; it doubles after each attempt up to ``reconnectMaxDelay``.
        var reconnectInitialDelay: Duration
        /// The longest reconnection delay.
        var reconnectMaxDelay: Duration
        /// How long a drain waits for running jobs.
        var drainTimeout: UInt64

        init(_ configuration: WorkerConfiguration) {
            heartbeat = configuration.heartbeatInterval.nanoseconds
            brokerSilence = heartbeat * UInt64(max(1, configuration.heartbeatLiveness))
            reconnectInitialDelay = configuration.reconnectInitialDelay
            reconnectMaxDelay = configuration.reconnectMaxDelay
            drainTimeout = configuration.drainTimeout.nanoseconds
        }
    }

    /// What the loop does about a message from the broker.
    enum Reaction: Equatable {
        /// Nothing more (liveness is already refreshed).
        case none
        /// Start the JOB (its slot is counted).
        case startJob
        /// Cancel the running job with this id, if it has not answered yet (see ``shouldCancel(_:answered:)``).
        case cancel([UInt8])
        /// The broker refused the registration (DISCONNECT as the answer to READY): reconnect after the backoff, on
        /// the next endpoint if there are several.
        case reconnectElsewhere
        /// The broker asked this worker to register again: a new connection at once.
        case registerAgain
        /// The broker refused this worker's definitions (``failure`` says why): the worker stops once its running
        /// jobs answered.
        case stop(message: String)
        /// The broker reported an error about one of the worker's messages: log it.
        case reportError(code: String, message: String)
        /// The broker does not speak the worker's newest version (ERROR `unsupported-version` answered READY): a new
        /// connection at once, registering with ``version``, now the previous one (section 5.17).
        case fallBack(message: String)
    }

    /// What is due at a turn of the loop, checked after the messages were read.
    enum Due: Equatable {
        case nothing
        /// Send a HEARTBEAT.
        case heartbeat
        /// The broker was silent for the whole liveness window: reconnect, on the next endpoint if any.
        case brokerSilent
        /// The connection did not complete its handshake in time (a standby binds nothing): try the next endpoint.
        case handshakeOverdue
    }

    let timing: Timing
    /// The version the worker speaks: 06, or 05 once a broker refused 06 (section 5.17); it then stays 05, so that a
    /// worker upgraded before its brokers keeps working with all of them.
    private(set) var version: UInt8 = Self.newestVersion
    /// The newest version the worker speaks.
    static let newestVersion: UInt8 = 6
    /// The endpoint in use, and when to move to the next.
    private(set) var rotation: EndpointRotation
    /// The current connection; RESULTs of jobs of an older one are dropped (section 7.1).
    private(set) var generation = 0
    /// The broker sent something other than DISCONNECT since this connection's READY (it took the registration).
    private(set) var registered = false
    /// The connection completed its handshake (so a disconnection now means the broker went away).
    private(set) var connectionEstablished = false
    /// Whether a handshake ever completed: after one did, a connection breaking off during the handshake means the
    /// broker went away, not that it requires CURVE.
    private(set) var handshakeSucceededBefore = false
    /// When the broker's silence ends this connection.
    private(set) var brokerExpiry: UInt64 = 0
    /// When the next HEARTBEAT is due.
    private(set) var nextHeartbeat: UInt64 = 0
    /// The delay before the next reconnection.
    private(set) var reconnectDelay: Duration
    private(set) var draining = false
    /// The broker acknowledged DRAIN: every JOB it sent has arrived.
    private(set) var drainAcknowledged = false
    private(set) var drainDeadline: UInt64 = 0
    /// Jobs started and not yet answered with their last RESULT (or dropped with their connection).
    private(set) var running = 0
    /// Why the worker stops other than by a drain.
    private(set) var failure: WorkerError?
    /// Results the connection's full queue refused, in order: sent before newer ones.
    private(set) var unsent: [FinishedJob] = []
    /// Results of jobs from a replaced connection, dropped.
    private(set) var droppedResults = 0
    /// Jobs a CANCEL reached while they ran.
    private(set) var cancelledJobs = 0
    /// RESULTs with outcome `cancelled`.
    private(set) var cancelledResults = 0

    init(timing: Timing, endpoints: [String]) {
        self.timing = timing
        reconnectDelay = timing.reconnectInitialDelay
        rotation = EndpointRotation(endpoints: endpoints, handshakeWindow: timing.heartbeat)
    }

    // MARK: Connection

    /// A new connection to ``EndpointRotation/current`` is being made (READY follows): a new generation, not
    /// registered, the handshake awaited.
    mutating func connecting(now: UInt64) {
        generation += 1
        connectionEstablished = false
        registered = false
        rotation.awaitHandshake(from: now)
    }

    /// The READY of the new connection is queued (or the connection failed): the liveness clock starts.
    mutating func connected(now: UInt64) {
        brokerExpiry = now + timing.brokerSilence
        nextHeartbeat = now + timing.heartbeat
    }

    /// Before a reconnection: moves to the next endpoint when asked and there are several; returns the endpoint
    /// left, if it moved.
    mutating func moveIfAsked(_ move: Bool) -> String? {
        guard move && rotation.rotates else { return nil }
        let from = rotation.current
        rotation.advance()
        return from
    }

    /// The backoff before a reconnection has passed: the next one waits twice as long, up to the maximum.
    mutating func backoffElapsed() {
        reconnectDelay = min(reconnectDelay * 2, timing.reconnectMaxDelay)
    }

    /// The connection completed its security handshake.
    mutating func handshakeSucceeded(now: UInt64) {
        connectionEstablished = true
        handshakeSucceededBefore = true
        rotation.handshakeSucceeded()
        if !registered {
            // The broker's silence counts from the handshake, not from the connect: a connection that took most of
            // the liveness window to complete (a link coming back) must not be dropped just as the broker answers
            // READY, which would lose the jobs it hands out meanwhile.
            brokerExpiry = max(brokerExpiry, now + timing.brokerSilence)
        }
    }

    /// The connection broke off. Returns true when it had completed its handshake: libzmq would reconnect
    /// underneath, maybe to a new broker that never gave this worker its jobs, so the loop makes a new connection.
    mutating func disconnected(now: UInt64) -> Bool {
        let dropped = connectionEstablished
        connectionEstablished = false
        rotation.awaitHandshake(from: now)
        return dropped
    }

    // MARK: Messages

    /// A message arrived from the broker: any message shows the broker is alive.
    mutating func received(_ command: BrokerCommand, now: UInt64) -> Reaction {
        receivedAnything(now: now)
        if case .error(let code, let text) = command, code == WireErrorCode.unsupportedVersion.rawValue, !registered,
            version > 5
        {
            // The answer to a CIPW06 READY from a broker of versions 01 to 05 (checks 2 and 5.9).
            version = 5
            return .fallBack(message: text)
        }
        if case .disconnect = command, !registered, !draining {
            // DISCONNECT as the answer to READY: this broker does not take workers (it lost its journal's database
            // and stopped accepting, or it is going away). Registering again at once would repeat, over and over.
            return .reconnectElsewhere
        }
        let answersReady = !registered
        registered = true
        reconnectDelay = timing.reconnectInitialDelay
        switch command {
        case .job:
            running += 1
            return .startJob
        case .heartbeat:
            return .none
        case .cancel(let jobID):
            return .cancel(jobID)
        case .drain:
            drainAcknowledged = true
            return .none
        case .disconnect:
            return draining ? .none : .registerAgain
        case .error(let code, let text) where code == WireErrorCode.definitionMismatch.rawValue:
            // The answer to READY (section 5.16): registering again would be refused again.
            failure = WorkerError(code: .definitionRefused, message: text)
            return .stop(message: text)
        case .error(let code, let text) where code == WireErrorCode.forbidden.rawValue && answersReady:
            // The answer to READY (section 13.3): the broker's permissions do not let this worker's key serve one of
            // its intent types; registering again would be refused again.
            failure = WorkerError(code: .registrationForbidden, message: text)
            return .stop(message: text)
        case .error(let code, let text):
            return .reportError(code: code, message: text)
        }
    }

    /// A message arrived that the loop could not decode and ignores: it still shows the broker is alive.
    mutating func receivedAnything(now: UInt64) {
        brokerExpiry = now + timing.brokerSilence
    }

    /// A malformed message with a usable job id arrived: the loop answers it with an error RESULT, so the broker
    /// frees the slot and the caller hears why.
    mutating func receivedMalformedJob(now: UInt64) {
        receivedAnything(now: now)
        running += 1
    }

    /// Whether a CANCEL should cancel its job's task: not when the job's last RESULT is already made (`answered`,
    /// what the loop holds) or waits in ``unsent``. Counts the cancellation.
    mutating func shouldCancel(_ jobID: [UInt8], answered: Bool) -> Bool {
        guard !answered, !unsent.contains(where: { $0.last && $0.jobID == jobID }) else { return false }
        cancelledJobs += 1
        return true
    }

    // MARK: Time

    /// When the loop must look at the time again.
    var wakeTime: UInt64 {
        var wakeAt = min(nextHeartbeat, brokerExpiry)
        if let deadline = rotation.moveDeadline { wakeAt = min(wakeAt, deadline) }
        if draining { wakeAt = min(wakeAt, drainDeadline) }
        return wakeAt
    }

    /// What is due now; a due HEARTBEAT is counted as sent.
    mutating func due(now: UInt64) -> Due {
        if now >= brokerExpiry { return .brokerSilent }
        if rotation.handshakeOverdue(at: now) { return .handshakeOverdue }
        if now >= nextHeartbeat {
            nextHeartbeat = now + timing.heartbeat
            return .heartbeat
        }
        return .nothing
    }

    // MARK: Draining and stopping

    /// The worker was asked to drain: it tells the broker (DRAIN) and waits for its jobs until the drain timeout.
    mutating func beginDrain(now: UInt64) {
        draining = true
        drainDeadline = now + timing.drainTimeout
    }

    /// Whether the loop ends now: refused by the broker with no job left, or a drain that is complete (no job
    /// running, and the broker acknowledged it or there is no connection) or out of time.
    func isOver(now: UInt64, connected: Bool) -> Bool {
        if failure != nil && running == 0 { return true }
        return draining && ((running == 0 && (drainAcknowledged || !connected)) || now >= drainDeadline)
    }

    // MARK: Results

    /// The results to send, oldest first: the refused ones, then `batch`. Results of a replaced connection are
    /// dropped here (the broker has re-dispatched or failed their jobs), their slots freed and counted.
    mutating func resultsToSend(_ batch: [FinishedJob]) -> [FinishedJob] {
        var queue = batch
        if !unsent.isEmpty {
            queue = unsent + batch
            unsent.removeAll()
        }
        guard queue.contains(where: { $0.generation != generation }) else { return queue }
        var current: [FinishedJob] = []
        for result in queue {
            if result.generation == generation {
                current.append(result)
            } else {
                droppedResults += 1
                if result.last { running -= 1 }
            }
        }
        return current
    }

    /// A RESULT was handed to the connection (or failed to send: it is not tried again).
    mutating func resultSent(_ result: FinishedJob) {
        if result.output.outcome == .cancelled { cancelledResults += 1 }
        if result.last { running -= 1 }
    }

    /// The connection's full queue refused `results` (in order): they go first next time.
    mutating func resultsRefused(_ results: ArraySlice<FinishedJob>) {
        unsent = Array(results)
    }
}
