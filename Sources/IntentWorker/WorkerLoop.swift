import ConciergeJSON
import IntentKit
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The worker's socket loop: one thread at a time owns the DEALER socket; jobs run as tasks, on the loop's own
/// thread between polls (the default: see ``LoopRelay`` for how a long handler hands the loop to another thread)
/// or on Swift's pool, and hand their results back through a locked queue and an eventfd.
///
/// Every `var` below "Loop state" belongs to the thread owning the loop at the time; ``LoopRelay`` orders the
/// hand-over of all of it.
///
/// The worker speaks `CIPW04` (`Schemas/PROTOCOL.md` sections 5.1 and 5.13–5.16): every message it sends has that
/// signature, and it accepts any signature from the broker. A JOB's idempotency key and attempt reach the handler's
/// ``HandlerContext``; a CANCEL cancels the `Task` running the job (the job's phase is still answered with a RESULT:
/// `cancelled` when the handler stopped for it, see ``HandlerProvider/run(intentType:phase:body:context:)``). A JOB
/// whose last phase (F9) is later than its phase runs the lifecycle's phases one after the other in the same task,
/// a fresh handler and a RESULT for each, while they answer `continue` (section 5.15).
final class WorkerLoop: @unchecked Sendable {
    /// The version of every message the worker sends: 06 (sections 5.7, 5.13, 5.15 to 5.17), or 05 after a broker
    /// refused 06 (``WorkerSession/version``).
    private var version: UInt8 { session.version }

    let configuration: WorkerConfiguration
    let provider: HandlerProvider
    let logger: Logger
    let context = ZMQContext()
    private let wake = EventFD()
    private let drainRequested = Atomic<Bool>(false)
    private let finished = Mutex<[FinishedJob]>([])
    private let executor: WorkerThreadExecutor?
    /// The tasks that run jobs on ``executor``, reused from job to job (nil when jobs run on Swift's pool).
    private let runners: JobRunnerPool?
    private let relay = LoopRelay()
    /// Wakes the standby thread when the loop ends.
    private let standbyWake = EventFD()

    // Loop state
    /// The rules: registration, liveness, endpoints, draining, and the accounting of jobs and RESULTs.
    private var session: WorkerSession
    private var receiveBuffer = ZMQMultipart(capacity: 16)
    /// How many times a handler held the loop's thread long enough for another thread to take the loop over.
    private var handOvers = 0
    /// Why the loop ended other than by a drain or the broker's refusal (reported to the `Service`).
    private var loopFailure: WorkerError?
    private var socket: ZMQSocket?
    /// What the loop waits on for the current socket, made once per connection.
    private var loopPoller: LoopPoller?
    /// Watches the socket for failed security handshakes (read when the broker is silent, to say why).
    private var monitor: ZMQSocketMonitor?
    /// The last failed security handshake on the current socket, explained.
    private var handshakeExplanation: String?
    /// The tasks of the jobs running on the current connection, by job id (its 8 bytes as one number), so that a
    /// CANCEL reaches them. An entry goes when its job's RESULT is sent (or dropped), and all go with the connection.
    private var runningTasks: [UInt64: Task<Void, Never>] = [:]

    /// The loop's poller: the socket, the wake-up eventfd and the monitor. The monitor is waited on through its
    /// readiness descriptor rather than as a socket, so that a poll costs one `ZMQ_EVENTS` check (two system calls
    /// in libzmq) fewer, twice per wait. That descriptor is edge-triggered: the loop reads a new connection's monitor
    /// once without waiting for it, and ``connectionDropped()`` receives until the monitor is empty every time.
    private final class LoopPoller {
        let socket: ZMQSocket
        var poller: ZMQPoller
        let wakeIndex: Int
        let monitorIndex: Int?

        init(socket: ZMQSocket, wake: EventFD, monitor: ZMQSocketMonitor?) {
            self.socket = socket
            var poller = ZMQPoller()
            poller.add(socket)
            wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
            if let descriptor = monitor?.socket.readinessFileDescriptor {
                monitorIndex = poller.add(fileDescriptor: descriptor)
            } else {
                monitorIndex = nil
            }
            self.poller = poller
        }
    }

    /// Each served intent type with its definition's canonical JSON, as READY announces them (section 5.16).
    let announcedDefinitions: [(type: String, definition: [UInt8])]

    init(configuration: WorkerConfiguration, provider: HandlerProvider, logger: Logger) {
        announcedDefinitions = provider.intentTypes.map { type in
            (type, provider.definition(of: type)?.jsonValue.serialized() ?? [])
        }
        self.configuration = configuration
        self.provider = provider
        var logger = logger
        logger[metadataKey: "worker"] = "\(configuration.name)"
        self.logger = logger
        session = WorkerSession(timing: .init(configuration), endpoints: configuration.brokerEndpoints)
        let executor = configuration.jobExecution == .workerThread ? WorkerThreadExecutor(wake: wake) : nil
        self.executor = executor
        runners = executor.map(JobRunnerPool.init(executor:))
    }

    func requestDrain() {
        drainRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// How long one handler may hold the loop's thread before the standby takes the loop over: a fifth of the
    /// heartbeat interval, between 10 and 100 ms (the hand-over happens after one to two of these).
    private var relayCheckMilliseconds: Int {
        Int(max(10, min(100, configuration.heartbeatInterval.nanoseconds / 5_000_000)))
    }

    // MARK: Connection

    private func connect() {
        socket?.close()
        monitor?.close()
        monitor = nil
        session.connecting(now: MonotonicTime.now())
        // The jobs of the old connection are over for the broker (re-dispatched, or ended `worker-lost` with their
        // outcome unknown, so a keyed retry may run elsewhere): their RESULTs are dropped, and their handlers are
        // cancelled so that an attempt does not go on beside its retry (PROTOCOL.md 7.1).
        if !runningTasks.isEmpty {
            logger.warning(
                "cancelling the jobs of a lost connection", metadata: ["jobs": "\(runningTasks.count)"])
            for task in runningTasks.values { task.cancel() }
        }
        runningTasks.removeAll()
        do {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.routingID, string: configuration.name)
            try socket.setOption(.sendHighWaterMark, 100_000)
            try socket.setOption(.receiveHighWaterMark, 100_000)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            handshakeExplanation = nil
            monitor = try? ZMQSocketMonitor(
                context: context, watching: socket,
                events: ZMQMonitorEvent.Kind.handshakeFailures.union([.handshakeSucceeded, .disconnected]))
            try socket.connect(session.rotation.current)
            // Version 04 (section 5.16): each type, then its definition. Never waits: the fresh connection pipe
            // takes it (it would be gone only after a failed handshake).
            var sink = socket
            guard
                try WorkerMessageEncoder.ready(
                    into: &sink, version: version, capacity: configuration.capacity, name: configuration.name,
                    intentTypes: announcedDefinitions.map { (Array($0.type.utf8), $0.definition) })
            else { throw ZMQError.wouldBlock }
            self.socket = socket
        } catch {
            logger.error("cannot connect to the broker", metadata: ["error": "\(error)"])
            self.socket = nil
        }
        session.connected(now: MonotonicTime.now())
        logger.info(
            "worker registering",
            metadata: [
                "broker": "\(session.rotation.current)", "capacity": "\(configuration.capacity)",
                "intents": "\(provider.intentTypes)",
            ]
        )
    }

    /// Waits with exponential backoff, then connects again (results of jobs from the old connection are dropped:
    /// the broker has re-dispatched or failed them). With several endpoints, `move` connects to the next one.
    private func reconnect(reason: String, move: Bool = false) {
        let reconnectDelay = session.reconnectDelay
        if let from = session.moveIfAsked(move) {
            logger.info(
                "moving to the next broker endpoint",
                metadata: [
                    "broker": "\(session.rotation.current)", "from": "\(from)", "reason": "\(reason)",
                    "delay": "\(reconnectDelay)",
                ])
        }
        if let failure = handshakeFailure() {
            logger.error(
                "the broker refused this worker's connection; retrying",
                metadata: ["reason": "\(failure)", "delay": "\(reconnectDelay)"]
            )
        } else {
            logger.warning(
                "broker lost; reconnecting",
                metadata: ["reason": "\(reason)", "delay": "\(reconnectDelay)"]
            )
        }
        socket?.close()
        socket = nil
        monitor?.close()
        monitor = nil
        let until = MonotonicTime.now() + reconnectDelay.nanoseconds
        var poller = ZMQPoller()
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        while MonotonicTime.now() < until {
            let left = Int((until - MonotonicTime.now()) / 1_000_000) + 1
            _ = try? poller.poll(timeoutMilliseconds: left)
            if poller.isReadable(wakeIndex) {
                wake.drain()
                if drainRequested.load(ordering: .acquiring) { return }
            }
        }
        session.backoffElapsed()
        connect()
    }

    /// The last failed security handshake on the current connection, explained (nil if none failed).
    private func handshakeFailure() -> String? {
        _ = connectionDropped()
        return handshakeExplanation
    }

    /// Reads the monitor's events. Returns true when a connection that had completed its handshake dropped: libzmq
    /// would reconnect underneath, maybe to a new broker that never gave this worker its jobs (section 7.1).
    private func connectionDropped() -> Bool {
        var dropped = false
        while let event = try? monitor?.receive() {
            if event.kind == .handshakeSucceeded {
                session.handshakeSucceeded(now: MonotonicTime.now())
            } else if event.kind == .disconnected {
                dropped = session.disconnected(now: MonotonicTime.now()) || dropped
            } else if let explanation = event.handshakeFailureExplanation(
                usingCurve: configuration.curve != nil, handshakeSucceededBefore: session.handshakeSucceededBefore)
            {
                handshakeExplanation = explanation
            }
        }
        return dropped
    }

    // MARK: Loop

    /// Starts the loop on a thread of its own (and, when handlers run on the loop's thread, its standby); calls
    /// `onFinish` once, when the loop has ended and its socket is closed (with the error that ended it, if any).
    func start(onFinish: @escaping @Sendable (WorkerError?) -> Void) {
        SocketThread.start(name: "concierge-worker") {
            self.executor?.adoptCurrentThread()
            self.connect()
            self.own(onFinish: onFinish)
        }
        if executor != nil { startStandby(onFinish: onFinish) }
    }

    private func startStandby(onFinish: @escaping @Sendable (WorkerError?) -> Void) {
        SocketThread.start(name: "concierge-standby") { self.standBy(onFinish: onFinish) }
    }

    /// The standby: looks at the loop every check interval and takes it over when the same handler was running on
    /// both looks; then starts the next standby and runs the loop.
    private func standBy(onFinish: @escaping @Sendable (WorkerError?) -> Void) {
        var poller = ZMQPoller()
        let wakeIndex = poller.add(fileDescriptor: standbyWake.fileDescriptor)
        var last = relay.observe()
        while true {
            _ = try? poller.poll(timeoutMilliseconds: relayCheckMilliseconds)
            if poller.isReadable(wakeIndex) { standbyWake.drain() }
            let seen = relay.observe()
            if LoopRelay.isFinished(seen) { return }
            if seen == last, relay.takeOver(ifStillAt: seen) {
                executor?.adoptCurrentThread()
                handOvers += 1
                logger.debug("a handler held the loop's thread; another thread took the loop over")
                startStandby(onFinish: onFinish)
                own(onFinish: onFinish)
                return
            }
            last = seen
        }
    }

    /// Runs the loop while this thread owns it; the thread that ends it closes the socket and calls `onFinish`.
    private func own(onFinish: @Sendable (WorkerError?) -> Void) {
        guard runLoop() else { return }  // taken over while a handler ran: the new owner goes on
        tearDown()
        let failure = session.failure ?? loopFailure
        relay.finish()
        standbyWake.signal()
        onFinish(failure)
    }

    /// The loop. Returns true when it ended, false when another thread took it over while a handler ran here.
    private func runLoop() -> Bool {
        while true {
            if drainRequested.load(ordering: .acquiring) && !session.draining { beginDrain() }
            if session.isOver(now: MonotonicTime.now(), connected: socket != nil) { break }
            guard let socket else {
                if session.draining { break }
                reconnect(reason: "no connection")
                if drainRequested.load(ordering: .acquiring) && socket == nil { break }
                continue
            }
            let waits: LoopPoller
            // A new connection's monitor is read once before its descriptor is trusted: libzmq signals it only for
            // events that arrive after a read found the monitor empty.
            var readMonitor = false
            if let current = loopPoller, current.socket === socket {
                waits = current
            } else {
                waits = LoopPoller(socket: socket, wake: wake, monitor: monitor)
                loopPoller = waits
                readMonitor = true
            }
            let now = MonotonicTime.now()
            let wakeAt = session.wakeTime
            var timeout = wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0
            if executor?.hasPendingJobs == true || hasFinished { timeout = 0 }
            if !session.unsent.isEmpty { timeout = min(timeout, 10) }  // retry RESULTs the full queue refused
            if readMonitor { timeout = 0 }
            do {
                try waits.poller.poll(timeoutMilliseconds: timeout)
            } catch {
                logger.error("poll failed", metadata: ["error": "\(error)"])
                loopFailure = WorkerError(
                    code: .pollFailed, message: "waiting on the broker's socket failed: \(error)")
                break
            }
            if waits.poller.isReadable(waits.wakeIndex) { wake.drain() }
            if let monitorIndex = waits.monitorIndex, readMonitor || waits.poller.isReadable(monitorIndex),
                connectionDropped()
            {
                // A new socket, so nothing of the old connection (RESULTs of its jobs, queued frames) reaches
                // whichever broker answers next; the broker that gave the jobs has re-dispatched or failed them.
                if session.draining {
                    logger.warning("connection to the broker lost while draining; leaving")
                    self.socket?.close()
                    self.socket = nil
                    break
                }
                logger.warning(
                    "connection to the broker lost; registering again on a new connection",
                    metadata: ["running-jobs": "\(session.running)"])
                connect()
                continue
            }
            var budget = 10_000
            while budget > 0, (try? socket.receive(into: &receiveBuffer)) == true {
                if !handle(&receiveBuffer) { break }
                budget -= 1
            }
            // Run the handlers of what just arrived (and of resumed jobs), then answer them in one go.
            if let executor, !executor.runPendingJobs(relay: relay) { return false }
            if let current = self.socket { sendFinished(current) }
            guard self.socket === socket else { continue }  // reconnected while handling
            switch session.due(now: MonotonicTime.now()) {
            case .nothing:
                break
            case .heartbeat:
                var sink = socket
                _ = try? WorkerMessageEncoder.heartbeat(into: &sink, version: version)
            case .brokerSilent:
                if session.draining {
                    logger.warning("broker silent while draining; leaving")
                    self.socket?.close()
                    self.socket = nil
                    return true
                }
                reconnect(reason: "broker silent for \(configuration.heartbeatLiveness) heartbeats", move: true)
            case .handshakeOverdue:
                // A standby binds nothing: this connection will not complete; try the next endpoint.
                if session.draining {
                    logger.warning("no broker while draining; leaving")
                    self.socket?.close()
                    self.socket = nil
                    return true
                }
                reconnect(reason: "no handshake within one heartbeat interval", move: true)
            }
        }
        return true
    }

    private func tearDown() {
        if let socket {
            sendFinished(socket)
            var sink = socket
            _ = try? WorkerMessageEncoder.disconnect(into: &sink, version: version)
            // Give libzmq a moment to flush the last frames before the socket closes with linger 0.
            try? socket.setOption(.linger, 1000)
            socket.close()
        }
        monitor?.close()
        runners?.finish()
        context.terminate()
        logger.info(
            "worker stopped",
            metadata: [
                "unfinished-jobs": "\(session.running)", "loop-hand-overs": "\(handOvers)",
                "results-dropped": "\(session.droppedResults)", "jobs-cancelled": "\(session.cancelledJobs)",
                "results-cancelled": "\(session.cancelledResults)", "job-runners": "\(runners?.runnersMade ?? 0)",
            ])
    }

    private func beginDrain() {
        session.beginDrain(now: MonotonicTime.now())
        logger.info("worker draining", metadata: ["running": "\(session.running)"])
        if var socket { _ = try? WorkerMessageEncoder.drain(into: &socket, version: version) }
    }

    /// Handles one message from the broker. Returns false when the connection was replaced.
    private func handle(_ message: inout ZMQMultipart) -> Bool {
        let now = MonotonicTime.now()
        let command: BrokerCommand
        do throws(BrokerMessageError) {
            command = try message.withFrames { frames, dropped throws(BrokerMessageError) in
                try BrokerMessageDecoder().decode(WireFrames(frames, dropped: dropped))
            }
        } catch {
            guard let jobID = error.jobID else {
                session.receivedAnything(now: now)
                logger.warning("ignored a message from the broker", metadata: ["error": "\(error)"])
                return true
            }
            // A JOB with a usable job id: answer it, so the broker frees the slot and the caller hears why.
            logger.warning("malformed JOB", metadata: ["error": "\(error)"])
            session.receivedMalformedJob(now: now)
            post(
                FinishedJob(
                    generation: session.generation, jobID: jobID,
                    output: JobOutput(outcome: .error, body: WireBody.error(error.code, error.message))
                )
            )
            return true
        }
        switch session.received(command, now: now) {
        case .none:
            return true
        case .startJob:
            if case .job(let job) = command { startJob(job, message: &message) }
            return true
        case .cancel(let jobID):
            cancel(jobID)
            return true
        case .reconnectElsewhere:
            reconnect(reason: "the broker answered READY with DISCONNECT", move: true)
            return false
        case .registerAgain:
            logger.info("broker asked to register again")
            connect()
            return false
        case .fallBack(let text):
            logger.warning(
                "the broker does not speak CIPW06; registering again with CIPW05",
                metadata: ["message": "\(text)", "broker": "\(session.rotation.current)"])
            connect()
            return false
        case .stop(let text):
            logger.critical("the broker refused this worker's intent definitions", metadata: ["message": "\(text)"])
            return true
        case .reportError(let code, let text):
            logger.error("broker reported an error", metadata: ["code": "\(code)", "message": "\(text)"])
            return true
        }
    }

    private func startJob(_ job: WorkerJob, message: inout ZMQMultipart) {
        let jobID = job.jobID
        let intentType = job.intentType
        let left = job.timeLeftMilliseconds
        let body = message.bytes(job.bodyIndex)
        let generation = session.generation
        // The decoder lets no `lifecycle` JOB through, and the job runner answers one with error `malformed`.
        let phase = job.phase
        let key = Self.key(jobID)
        var context = HandlerContext(
            jobIDBytes: key,
            workerName: configuration.name,
            phase: phase,
            deadline: .now + .milliseconds(left),
            idempotencyKey: job.idempotencyKey.flatMap(HandlerContext.idempotencyKey(bytes:)),
            attempt: job.attempt
        )
        context.traceContext = job.traceContext
        let jobContext = context
        let tracing = configuration.tracing
        logger.debug(
            "job started",
            metadata: [
                "job": "\(context.jobID)", "intent": "\(intentType)",
                "phase": "\(phase)",
            ])
        let provider = self.provider
        let lastPhase = job.lastPhase
        let work: @Sendable () async -> Void = {
            var phase = phase
            var body = body
            while true {
                let output =
                    tracing
                    ? await HandlerSpan.run(
                        provider, intentType: intentType, phase: phase, body: body, context: jobContext)
                    : await provider.run(intentType: intentType, phase: phase, body: body, context: jobContext)
                // A chained job (section 5.15) goes on with the next phase on this one's output, in a fresh handler;
                // once CANCEL reached the task, that phase answers `cancelled` without running its handler.
                guard output.outcome == .continue, phase.order < lastPhase.order, let next = phase.next else {
                    self.post(FinishedJob(generation: generation, jobID: jobID, output: output))
                    return
                }
                self.post(FinishedJob(generation: generation, jobID: jobID, output: output, last: false))
                phase = next
                body = output.body
            }
        }
        // The table entry is made before this thread can see the job's result (sendFinished runs on the loop's
        // thread after this returns), so it is always removed after it was made.
        if let runners {
            runningTasks[key] = runners.run(work)
        } else {
            runningTasks[key] = Task.detached(operation: work)
        }
    }

    /// CANCEL (section 5.13): cancels the task of a running job, which still answers with exactly one RESULT. A job
    /// that was already answered (or whose result waits to be sent) or that this worker does not know is ignored.
    ///
    /// A handler's `withTaskCancellationHandler` `onCancel` runs here, on the loop's thread: it should be quick.
    private func cancel(_ jobID: [UInt8]) {
        guard let task = runningTasks[Self.key(jobID)] else {
            logger.debug("CANCEL for a job not running here ignored", metadata: ["job": "\(Self.hex(jobID))"])
            return
        }
        let answered = finished.withLock { $0.contains { $0.last && $0.jobID == jobID } }
        guard session.shouldCancel(jobID, answered: answered) else {
            logger.debug("CANCEL for a job already finished ignored", metadata: ["job": "\(Self.hex(jobID))"])
            return
        }
        logger.info("job cancelled", metadata: ["job": "\(Self.hex(jobID))"])
        task.cancel()
    }

    /// A job id (8 bytes, which the decoder checks) as the key of ``runningTasks``.
    private static func key(_ jobID: [UInt8]) -> UInt64 {
        jobID.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Lower-case hex of a job id, two digits a byte (one allocation).
    static func hex(_ bytes: [UInt8]) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { digits in
                for (index, byte) in bytes.enumerated() {
                    buffer[2 * index] = digits[Int(byte >> 4)]
                    buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }

    private func post(_ result: FinishedJob) {
        finished.withLock { $0.append(result) }
        // On the loop's own thread the loop sends it before it polls again; elsewhere, wake the loop.
        if executor == nil || executor?.isOwnerThread == false { wake.signal() }
    }

    private var hasFinished: Bool { finished.withLock { !$0.isEmpty } }

    /// Sends the RESULTs of finished jobs, never waiting: what the connection's full queue refuses is kept, in
    /// order, for the next turn of the loop (dropped if the connection is replaced meanwhile, section 7.1).
    private func sendFinished(_ socket: ZMQSocket) {
        let batch = finished.withLock { pending -> [FinishedJob] in
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            return batch
        }
        if session.unsent.isEmpty && batch.isEmpty { return }
        let dropped = session.droppedResults
        let queue = session.resultsToSend(batch)
        if session.droppedResults > dropped {
            logger.info(
                "dropped results of jobs from a lost connection",
                metadata: ["results": "\(session.droppedResults - dropped)"])
        }
        var sink = socket
        for (index, result) in queue.enumerated() {
            if result.last { runningTasks[Self.key(result.jobID)] = nil }
            do {
                // A message's first frame is refused when the queue is full; its later frames are then always taken.
                guard
                    try WorkerMessageEncoder.result(
                        into: &sink, version: version, jobID: result.jobID, outcome: result.output.outcome,
                        body: .bytes(result.output.body))
                else {
                    session.resultsRefused(queue[index...])
                    return
                }
            } catch {
                logger.error("could not send a result", metadata: ["error": "\(error)"])
            }
            session.resultSent(result)
        }
    }
}
