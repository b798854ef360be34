import DequeModule
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The broker's engine: one thread, one `zmq_poll` loop over the frontend and backend ROUTER sockets.
///
/// Everything here runs on the loop's own thread except ``requestStop()``. On every wake-up the loop drains
/// every message waiting on both sockets before polling again (the cost of a wake-up is paid once per batch,
/// not per message), routes on frames only (bodies are moved between sockets as libzmq messages, never parsed
/// or copied), and keeps every request until its final reply: a job on a worker that dies is re-dispatched
/// (resolve, confirm) or answered with `worker-lost` (handle), never forgotten.
final class BrokerLoop: @unchecked Sendable {
    let configuration: BrokerConfiguration
    let logger: Logger
    let context: ZMQContext
    let frontend: ZMQSocket
    let backend: ZMQSocket
    /// With CURVE: the ZAP handler that admits listed keys only (stopped in ``finishShutdown()``).
    let zap: ZAPHandler?
    /// The endpoints actually bound (ephemeral ports resolved).
    let frontendEndpoint: String
    let backendEndpoint: String
    private let wake = EventFD()
    private let stopRequested = Atomic<Bool>(false)
    let finalStatistics = Mutex(BrokerStatistics())

    // MARK: Loop-thread state
    private var inflight: [RequestKey: PendingRequest] = [:]
    private var workers: [[UInt8]: WorkerEntry] = [:]
    private var typeIndex: [[UInt8]: Int] = [:]
    private var typeNames: [[UInt8]] = []
    private var typeWorkers: [[WorkerEntry]] = []
    private var typeQueues: [Deque<PendingRequest>] = []
    /// When the last worker of a type went away (0 while one serves it).
    private var typeOrphanedAt: [UInt64] = []
    /// Where the next round-robin search starts, per intent type.
    private var typeCursor: [Int] = []
    /// Jobs answered per intent type since the last rate update, and the smoothed rate (jobs per second): how
    /// fast each type's queue moves, to shed at once a request that could not start before its deadline.
    private var typeAnswered: [Int] = []
    private var typeJobRate: [Double] = []
    /// Whether the type was saturated since the last rate update (a request had to wait, or a job filled the last
    /// worker with room): only then do its answered jobs measure how fast its queue moves (a type that is not
    /// saturated answers as fast as it is asked).
    private var typeSaturatedSinceUpdate: [Bool] = []
    private var nextRateUpdate: UInt64 = 0
    private var lastRateUpdate: UInt64 = 0
    private var queuedCount = 0
    private var timers = TimerHeap()
    /// JOBs booked and not yet sent (see ``send(_:to:)``).
    private struct OutgoingJob {
        let request: PendingRequest
        let worker: WorkerEntry
        let jobID: UInt64
    }
    private var outbox: [OutgoingJob] = []
    /// Replies queued and not yet sent (see ``flushReplies()``).
    private struct OutgoingReply {
        enum Body {
            case bytes([UInt8])
            case message(ZMQMessage)
        }
        let client: [UInt8]
        let command: StaticString
        let id: [UInt8]
        let status: StaticString
        let phase: StaticString
        let body: Body
    }
    private var replyOutbox: [OutgoingReply] = []
    private var results: ResultStore
    private var nextJobID: UInt64 = 1
    private var statistics = BrokerStatistics()
    private var shuttingDown = false
    private var shutdownDeadline: UInt64 = 0

    private let heartbeatNanos: UInt64
    private let workerExpiryNanos: UInt64
    private let defaultDeadlineNanos: UInt64
    private let hardLimitNanos: UInt64
    private let maxReplyMarginNanos: UInt64
    private let graceNanos: UInt64
    /// The frame checks of sections 4.8 and 5.12 (IntentWire).
    private let clientDecoder: ClientMessageDecoder
    private let workerDecoder: WorkerMessageDecoder

    init(configuration: BrokerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        heartbeatNanos = configuration.heartbeatInterval.nanoseconds
        workerExpiryNanos = heartbeatNanos * UInt64(max(1, configuration.heartbeatLiveness))
        defaultDeadlineNanos = configuration.defaultDeadline.nanoseconds
        hardLimitNanos = configuration.hardLimit.nanoseconds
        maxReplyMarginNanos = configuration.maxReplyMargin.nanoseconds
        graceNanos = configuration.workerGracePeriod.nanoseconds
        let limits = WireLimits(
            maxBodySize: configuration.maxBodySize, hardLimitMilliseconds: Int(hardLimitNanos / 1_000_000)
        )
        clientDecoder = ClientMessageDecoder(limits: limits)
        workerDecoder = WorkerMessageDecoder(limits: limits)
        results = ResultStore(ttl: configuration.resultTTL.nanoseconds, capacity: configuration.maxStoredResults)
        guard heartbeatNanos > 0, defaultDeadlineNanos > 0, hardLimitNanos >= defaultDeadlineNanos else {
            throw BrokerError(
                code: .badConfiguration,
                message: "heartbeat must be > 0 and the hard limit at least the default deadline"
            )
        }
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
                // Never drop a message silently (libzmq#2037) and let a restarted peer take over its id (#4603).
                try socket.setOption(.routerMandatory, 1)
                try socket.setOption(.routerHandover, 1)
                try socket.setOption(
                    .sendHighWaterMark, index == 0 ? Int32(clamping: max(1, configuration.clientQueueLimit)) : 100_000)
                try socket.setOption(.receiveHighWaterMark, 100_000)
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

    /// Asks the loop to shut down gracefully (any thread).
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    // MARK: The loop

    func run() {
        var poller = ZMQPoller()
        poller.add(frontend)
        poller.add(backend)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        var buffer = ZMQMultipart(capacity: clientDecoder.limits.maxFrames + 1)  // + the routing id
        var nextHeartbeat = MonotonicTime.now() + heartbeatNanos
        logger.info(
            "broker ready",
            metadata: ["frontend": "\(frontendEndpoint)", "backend": "\(backendEndpoint)"]
        )

        while true {
            var now = MonotonicTime.now()
            var wakeAt = nextHeartbeat
            if let timer = timers.nextTime, timer < wakeAt { wakeAt = timer }
            if shuttingDown, shutdownDeadline < wakeAt { wakeAt = shutdownDeadline }
            let timeout = wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0
            do {
                try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                logger.critical("poll failed, broker stops", metadata: ["error": "\(error)"])
                break
            }
            if poller.isReadable(wakeIndex) {
                wake.drain()
                if stopRequested.load(ordering: .acquiring) && !shuttingDown { beginShutdown() }
            }
            // Drain everything waiting on both sockets, alternating so neither side starves the other; timers
            // that fall due meanwhile fire between batches, so a flood never delays a deadline reply.
            var budget = 50_000
            while budget > 0 {
                var progressed = false
                if (try? frontend.receive(into: &buffer)) == true {
                    handleClientMessage(&buffer)
                    progressed = true
                }
                if (try? backend.receive(into: &buffer)) == true {
                    handleWorkerMessage(&buffer)
                    progressed = true
                }
                if !progressed { break }
                budget -= 1
                if budget & 63 == 0 {
                    flushJobs()
                    flushReplies()
                }
                if budget & 127 == 0, let timer = timers.nextTime {
                    let now = MonotonicTime.now()
                    if timer <= now { while let entry = timers.popDue(now) { fire(entry, now: now) } }
                }
            }
            now = MonotonicTime.now()
            while let entry = timers.popDue(now) { fire(entry, now: now) }
            if now >= nextRateUpdate { updateJobRates(now: now) }
            if now >= nextHeartbeat {
                heartbeat(now: now)
                nextHeartbeat = now + heartbeatNanos
            }
            flushJobs()
            flushReplies()
            if shuttingDown && (inflight.isEmpty || now >= shutdownDeadline) { break }
        }
        finishShutdown()
    }

    // MARK: Clients

    private func handleClientMessage(_ message: inout ZMQMultipart) {
        let client = message.bytes(0)
        let command: ClientCommand
        do throws(ClientMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(ClientMessageError) in
                try clientDecoder.decode(WireFrames(frames, dropped: dropped))
            }
        } catch {
            statistics.malformedClientMessages += 1
            replyError(
                client: client, id: error.requestID, phase: error.phaseFrame, error.code, error.message,
                command: error.answer.command
            )
            return
        }
        switch command {
        case .request(let request):
            handleRequest(request, message: &message, client: client)
        case .status(let id):
            handleStatus(client: client, id: id)
        case .ping:
            _ = sendToClient(client, [CIP.clientSignature, CIP.Broker.pong])
        }
    }

    /// A REQUEST whose frames passed checks 1-10 (section 4.8): checks 11-14, then acceptance.
    private func handleRequest(_ decoded: ClientRequest, message: inout ZMQMultipart, client: [UInt8]) {
        let id = decoded.requestID
        let phase = decoded.phase
        let deadlineNanos = decoded.deadlineMilliseconds.map { UInt64($0) * 1_000_000 } ?? defaultDeadlineNanos
        guard !shuttingDown else {
            replyError(client: client, id: id, phase: phase.name, .shuttingDown, "the broker is shutting down")
            return
        }
        let key = RequestKey(client: client, id: id)
        guard inflight[key] == nil else {
            replyError(
                client: client, id: id, phase: phase.name, .duplicateRequest,
                "request id is already in flight on this connection"
            )
            return
        }
        let now = MonotonicTime.now()
        let typeBytes = decoded.intentType
        guard let type = typeIndex[typeBytes], isServed(type, now: now) else {
            replyError(
                client: client, id: id, phase: phase.name, .unknownIntent,
                "no worker serves intent type \"\(String(decoding: typeBytes, as: UTF8.self))\""
            )
            return
        }
        let request = PendingRequest(
            key: key, intentType: type, requested: phase, body: message.take(1 + ClientRequest.bodyIndex), arrival: now,
            deadline: now + deadlineNanos
        )
        if !typeQueues[type].isEmpty || !anyWorkerHasRoom(for: type) {
            if queuedCount >= configuration.maxQueuedRequests {
                replyError(client: client, id: id, phase: phase.name, .busy, "the broker's queue is full")
                return
            }
            if typeQueues[type].count >= configuration.maxQueuedPerIntentType {
                replyError(
                    client: client, id: id, phase: phase.name, .busy,
                    "the queue of intent type \"\(String(decoding: typeBytes, as: UTF8.self))\" is full"
                )
                return
            }
            // Shed at once what the queue would not start before the deadline (its measured pace).
            let rate = typeJobRate[type]
            let ahead = Double(typeQueues[type].count + 1)
            if rate > 0, ahead / rate * 1e9 > Double(deadlineNanos) * 0.8 {
                statistics.shedRequests += 1
                replyError(
                    client: client, id: id, phase: phase.name, .busy,
                    "no worker could start the request before its deadline (\(Int(ahead)) queued, about "
                        + "\(Int(rate)) jobs/s)"
                )
                return
            }
        }
        statistics.requestsAccepted += 1
        inflight[key] = request
        // Act a little before the deadline (a tenth of it, at most the configured margin) so that the reply
        // arrives by the deadline.
        let margin = min(deadlineNanos / 10, maxReplyMarginNanos)
        timers.push(.init(time: request.deadline - margin, kind: .deadline, request: request))
        dispatch(request)
    }

    private func isServed(_ type: Int, now: UInt64) -> Bool {
        // `now` may be older than typeOrphanedAt (heartbeat() reads the clock before removeWorker() does): no
        // subtraction, so no UInt64 underflow.
        !typeWorkers[type].isEmpty || now < typeOrphanedAt[type] &+ graceNanos
    }

    private func handleStatus(client: [UInt8], id: [UInt8]) {
        let key = RequestKey(client: client, id: id)
        if let request = inflight[key] {
            let body = progressBody(request, now: MonotonicTime.now())
            queueReply(
                client,
                CIP.Broker.status,
                id: id,
                status: CIP.Status.progress,
                phase: request.phase.name,
                body: .bytes(body)
            )
        } else if let result = results.result(for: key) {
            queueReply(
                client,
                CIP.Broker.status,
                id: id,
                status: result.isError ? CIP.Status.error : CIP.Status.final,
                phase: result.phase,
                body: .message(result.body)
            )
        } else {
            replyError(
                client: client, id: id, phase: "", .unknownRequest,
                "no request with this id is in flight or kept on this connection", command: CIP.Broker.status
            )
        }
    }

    private func progressBody(_ request: PendingRequest, now: UInt64) -> [UInt8] {
        WireBody.progress(
            state: request.state == .running ? "running" : "queued",
            phase: request.phase,
            elapsedMilliseconds: Int((now - request.arrival) / 1_000_000),
            worker: request.worker?.name
        )
    }

    // MARK: Workers

    private func handleWorkerMessage(_ message: inout ZMQMultipart) {
        let routingID = message.bytes(0)
        let registered = workers[routingID]
        let command: WorkerCommand
        do throws(WorkerMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(WorkerMessageError) in
                try workerDecoder.decode(WireFrames(frames, dropped: dropped), isRegistered: registered != nil)
            }
        } catch {
            statistics.malformedWorkerMessages += 1
            if let registered, error.isFromRegisteredWorker { heard(from: registered, now: MonotonicTime.now()) }
            sendWorkerError(routingID, error.code, error.message)
            return
        }
        let now = MonotonicTime.now()
        switch command {
        case .ready(let ready):
            handleReady(ready, routingID: routingID, now: now)
            return
        case .unregistered(let name):
            // Not registered (e.g. the broker restarted): tell it to register again.
            if name != .disconnect {
                _ = sendToWorker(routingID, [CIP.workerSignature, CIP.Worker.disconnect])
            }
            if name == .result { statistics.strayResults += 1 }
            return
        default:
            break
        }
        guard let worker = registered else { return }  // the decoder answers .unregistered for these
        heard(from: worker, now: now)
        switch command {
        case .result(let result):
            handleResult(result, message: &message, worker: worker)
        case .drain:
            worker.draining = true
            // The acknowledgement follows every JOB sent before it on the same connection: once the worker
            // has it, it knows no job is still on its way and may leave when the ones it has are answered.
            sendToWorker(worker.routingID, [CIP.workerSignature, CIP.Worker.drain])
            logger.info("worker draining", metadata: ["worker": "\(worker.name)", "jobs": "\(worker.load)"])
        case .disconnect:
            logger.info("worker left", metadata: ["worker": "\(worker.name)"])
            removeWorker(worker, reason: "disconnected")
        case .heartbeat, .ready, .unregistered:
            return
        }
    }

    /// Any message from a registered worker proves it alive, and unblocks it (section 7.1).
    private func heard(from worker: WorkerEntry, now: UInt64) {
        worker.expiry = now + workerExpiryNanos
        if worker.blocked {
            worker.blocked = false
            fill(worker)
        }
    }

    private func handleReady(_ ready: WorkerReady, routingID: [UInt8], now: UInt64) {
        var types: [Int] = []
        for bytes in ready.intentTypes {
            let type = intern(bytes)
            if !types.contains(type) { types.append(type) }
        }
        if let previous = workers[routingID] {
            // The same routing id registering again is a new incarnation (a restarted process taking over
            // the id): whatever the old one was running is lost.
            logger.warning("worker re-registered; its previous jobs are lost", metadata: ["worker": "\(previous.name)"])
            removeWorker(previous, reason: "re-registered")
        }
        let capacity = ready.capacity
        let worker = WorkerEntry(
            routingID: routingID, name: ready.nameString, capacity: capacity, intentTypes: types,
            expiry: now + workerExpiryNanos
        )
        workers[routingID] = worker
        for type in types {
            typeWorkers[type].append(worker)
            typeOrphanedAt[type] = 0
        }
        statistics.workersRegistered += 1
        logger.info(
            "worker registered",
            metadata: [
                "worker": "\(worker.name)", "capacity": "\(capacity)",
                "intents": "\(types.map { String(decoding: typeNames[$0], as: UTF8.self) })",
            ]
        )
        fill(worker)
    }

    private func intern(_ bytes: [UInt8]) -> Int {
        if let index = typeIndex[bytes] { return index }
        let index = typeNames.count
        typeIndex[bytes] = index
        typeNames.append(bytes)
        typeWorkers.append([])
        typeQueues.append([])
        typeOrphanedAt.append(0)
        typeCursor.append(0)
        typeAnswered.append(0)
        typeJobRate.append(0)
        typeSaturatedSinceUpdate.append(false)
        return index
    }

    private func handleResult(_ result: WorkerResult, message: inout ZMQMultipart, worker: WorkerEntry) {
        guard let request = worker.jobs.removeValue(forKey: result.jobID) else {
            statistics.strayResults += 1
            logger.warning(
                "dropped a result for a job this worker was not given", metadata: ["worker": "\(worker.name)"])
            return
        }
        defer { fill(worker) }
        typeAnswered[request.intentType] += 1
        guard request.state != .done else { return }  // already answered (timeout); the slot is free again
        request.worker = nil
        let body = message.take(1 + WorkerResult.bodyIndex)
        if result.outcome == .continue, request.requested == .lifecycle, let next = request.phase.next {
            request.phase = next
            request.body = body
            request.state = .queued
            dispatch(request)
        } else if result.outcome == .error {
            finish(request, isError: true, message: body)
        } else {
            finish(request, isError: false, message: body)
        }
    }

    /// Removes a worker; its unfinished jobs are re-dispatched (resolve, confirm) or failed (handle).
    private func removeWorker(_ worker: WorkerEntry, reason: String) {
        guard !worker.removed else { return }
        worker.removed = true
        if workers[worker.routingID] === worker { workers[worker.routingID] = nil }
        let now = MonotonicTime.now()
        for type in worker.intentTypes {
            typeWorkers[type].removeAll { $0 === worker }
            if typeWorkers[type].isEmpty { typeOrphanedAt[type] = now }
        }
        if reason != "disconnected" || !worker.jobs.isEmpty { statistics.workersLost += 1 }
        let lost = worker.jobs.values.sorted { $0.arrival < $1.arrival }
        worker.jobs = [:]
        if !lost.isEmpty {
            logger.warning(
                "worker lost with jobs",
                metadata: ["worker": "\(worker.name)", "reason": "\(reason)", "jobs": "\(lost.count)"]
            )
        }
        for request in lost where request.state != .done {
            request.worker = nil
            request.state = .queued
            if request.phase.isRetriable {
                statistics.jobsRedispatched += 1
                dispatch(request, atFront: true)
            } else {
                finish(
                    request, isError: true,
                    body: WireBody.error(
                        .workerLost, "the worker running this handle job was lost; it is not run again"
                    )
                )
            }
        }
    }

    // MARK: Dispatching

    /// Whether a worker of `type` could take a job now (no side effects: the round-robin cursor stays put).
    private func anyWorkerHasRoom(for type: Int) -> Bool {
        typeWorkers[type].contains { $0.hasRoom }
    }

    /// The least-loaded worker of `type` with room; ties go round-robin so idle workers share the work.
    private func pickWorker(for type: Int) -> WorkerEntry? {
        let candidates = typeWorkers[type]
        let count = candidates.count
        guard count > 0 else { return nil }
        let start = typeCursor[type] % count
        var best = -1
        for offset in 0..<count {
            let index = (start + offset) % count
            let worker = candidates[index]
            guard worker.hasRoom else { continue }
            if best < 0 || worker.load < candidates[best].load {
                best = index
                if worker.load == 0 { break }
            }
        }
        guard best >= 0 else { return nil }
        typeCursor[type] = best + 1
        return candidates[best]
    }

    private func dispatch(_ request: PendingRequest, atFront: Bool = false) {
        while let worker = pickWorker(for: request.intentType) {
            if send(request, to: worker) { return }
        }
        // No worker has room: wait in the intent type's queue (oldest first).
        queuedCount += 1
        typeSaturatedSinceUpdate[request.intentType] = true
        if atFront {
            typeQueues[request.intentType].prepend(request)
        } else {
            typeQueues[request.intentType].append(request)
        }
    }

    /// Gives the request's current job to `worker`: the job is booked at once and its JOB goes out with the
    /// others of this batch (``flushJobs()``), so the I/O thread gets the batch's jobs in one burst (a wake-up and
    /// a TCP write for many jobs, not for each). Returns false when the request has nothing to send.
    private func send(_ request: PendingRequest, to worker: WorkerEntry) -> Bool {
        guard request.body != nil else { return true }
        let jobID = nextJobID
        nextJobID &+= 1
        request.jobID = jobID
        request.state = .running
        request.started = true
        request.worker = worker
        worker.jobs[jobID] = request
        statistics.jobsDispatched += 1
        outbox.append(OutgoingJob(request: request, worker: worker, jobID: jobID))
        let type = request.intentType
        if !worker.hasRoom, !typeSaturatedSinceUpdate[type], !anyWorkerHasRoom(for: type) {
            typeSaturatedSinceUpdate[type] = true
        }
        return true
    }

    /// Sends the JOBs booked since the last flush. A worker whose queue is full is marked blocked and one that is
    /// unreachable is removed; their jobs go to another worker or back to the queue.
    private func flushJobs() {
        var index = 0
        while index < outbox.count {  // re-dispatches below may book more
            let job = outbox[index]
            index += 1
            let request = job.request
            let worker = job.worker
            guard !worker.removed, worker.jobs[job.jobID] === request else { continue }  // re-dispatched meanwhile
            guard request.state == .running, let body = request.body else {
                // Ended before its JOB went out (hard limit): the worker never sees it, so free the slot.
                worker.jobs.removeValue(forKey: job.jobID)
                fill(worker)
                continue
            }
            let now = MonotonicTime.now()
            let left = request.deadline > now ? (request.deadline - now) / 1_000_000 : 0
            do {
                guard try backend.send(worker.routingID, more: true) else {
                    // Its queue is full: no more jobs for it until it is heard from again.
                    worker.blocked = true
                    worker.jobs.removeValue(forKey: job.jobID)
                    statistics.jobsDispatched -= 1
                    request.worker = nil
                    request.state = .queued
                    dispatch(request, atFront: true)
                    continue
                }
                try backend.send(CIP.workerSignature, more: true)
                try backend.send(CIP.Worker.job, more: true)
                var id = job.jobID
                try withUnsafeBytes(of: &id) { _ = try backend.send($0, more: true) }
                try backend.send(typeNames[request.intentType], more: true)
                try backend.send(request.phase.name, more: true)
                try backend.send(String(left), more: true)
                try backend.send(body)
            } catch {
                logger.warning("worker unreachable", metadata: ["worker": "\(worker.name)", "error": "\(error)"])
                // Its jobs not sent yet (this one and later ones) go elsewhere like never-run jobs; removing the
                // worker then re-dispatches or fails the ones it really had.
                var unsent: [PendingRequest] = []
                for later in outbox[(index - 1)...] where later.worker === worker {
                    guard worker.jobs.removeValue(forKey: later.jobID) != nil else { continue }
                    statistics.jobsDispatched -= 1
                    guard later.request.state == .running else { continue }
                    later.request.worker = nil
                    later.request.state = .queued
                    unsent.append(later.request)
                }
                removeWorker(worker, reason: "unreachable")
                for request in unsent { dispatch(request, atFront: true) }
            }
        }
        outbox.removeAll(keepingCapacity: true)
    }

    /// Gives `worker` queued jobs of its intent types, oldest first, while it has room.
    private func fill(_ worker: WorkerEntry) {
        while worker.hasRoom {
            var bestType = -1
            var bestArrival = UInt64.max
            for type in worker.intentTypes {
                while let first = typeQueues[type].first, first.state == .done { typeQueues[type].removeFirst() }
                if let first = typeQueues[type].first, first.arrival < bestArrival {
                    bestType = type
                    bestArrival = first.arrival
                }
            }
            guard bestType >= 0 else { return }
            let request = typeQueues[bestType].removeFirst()
            queuedCount -= 1
            if !send(request, to: worker) {
                queuedCount += 1
                typeQueues[bestType].prepend(request)
                return
            }
        }
    }

    // MARK: Replies

    private func finish(_ request: PendingRequest, isError: Bool, body: [UInt8]) {
        finish(request, isError: isError, message: ZMQMessage(bytes: body))
    }

    private func finish(_ request: PendingRequest, isError: Bool, message: ZMQMessage) {
        if request.state == .queued { queuedCount -= 1 }
        request.state = .done
        request.body = nil
        inflight.removeValue(forKey: request.key)
        if isError { statistics.errorReplies += 1 } else { statistics.finalReplies += 1 }
        request.firstReplySent = true
        queueReply(
            request.key.client,
            CIP.Broker.reply,
            id: request.key.id,
            status: isError ? CIP.Status.error : CIP.Status.final,
            phase: request.phase.name,
            body: .message(message)
        )
        results.store(
            .init(isError: isError, phase: request.phase.name, body: message), for: request.key,
            now: MonotonicTime.now()
        )
    }

    private func replyError(
        client: [UInt8], id: [UInt8], phase: StaticString, _ code: WireErrorCode, _ text: String,
        command: StaticString = CIP.Broker.reply
    ) {
        statistics.errorReplies += 1
        queueReply(
            client, command, id: id, status: CIP.Status.error, phase: phase,
            body: .bytes(WireBody.error(code, text))
        )
    }

    /// Sends a frame list to a client. Returns false (and counts it) when the client is gone or its queue is
    /// full: sends never block the broker.
    @discardableResult
    private func sendToClient(_ client: [UInt8], _ head: [StaticString]) -> Bool {
        do {
            guard try frontend.send(client, more: true) else { return undelivered() }
            for (index, frame) in head.enumerated() { try frontend.send(frame, more: index < head.count - 1) }
            return true
        } catch {
            return undelivered()
        }
    }

    /// Queues a REPLY or STATUS answer `[client, CIPC01, command, id, status, phase, body]`; it goes out with the
    /// others of this batch (``flushReplies()``), in order.
    private func queueReply(
        _ client: [UInt8], _ command: StaticString, id: [UInt8], status: StaticString, phase: StaticString,
        body: OutgoingReply.Body
    ) {
        replyOutbox.append(
            OutgoingReply(client: client, command: command, id: id, status: status, phase: phase, body: body))
    }

    /// Sends the queued replies. One that cannot go out (the client is gone, or its queue is full) is counted and
    /// dropped: sends never block the broker, and the result stays available to STATUS.
    private func flushReplies() {
        for reply in replyOutbox {
            do {
                guard try frontend.send(reply.client, more: true) else {
                    _ = undelivered()
                    continue
                }
                try frontend.send(CIP.clientSignature, more: true)
                try frontend.send(reply.command, more: true)
                try frontend.send(reply.id, more: true)
                try frontend.send(reply.status, more: true)
                try frontend.send(reply.phase, more: true)
                switch reply.body {
                case .bytes(let bytes): try frontend.send(bytes)
                case .message(let message): try frontend.send(message)
                }
            } catch {
                _ = undelivered()
            }
        }
        replyOutbox.removeAll(keepingCapacity: true)
    }

    private func undelivered() -> Bool {
        statistics.undeliveredReplies += 1
        return false
    }

    /// Sends a control message to a worker at once, after the JOBs booked before it (a worker relies on the order:
    /// no JOB follows the acknowledgement of its DRAIN).
    @discardableResult
    private func sendToWorker(_ routingID: [UInt8], _ frames: [StaticString]) -> Bool {
        flushJobs()
        do {
            guard try backend.send(routingID, more: true) else { return false }
            for (index, frame) in frames.enumerated() { try backend.send(frame, more: index < frames.count - 1) }
            return true
        } catch {
            return false
        }
    }

    private func sendWorkerError(_ routingID: [UInt8], _ code: WireErrorCode, _ text: String) {
        flushJobs()
        do {
            guard try backend.send(routingID, more: true) else { return }
            try backend.send(CIP.workerSignature, more: true)
            try backend.send(CIP.Worker.error, more: true)
            try backend.send(code.rawValue, more: true)
            try backend.send(text)
        } catch {}
    }

    // MARK: Time

    private func fire(_ entry: TimerHeap.Entry, now: UInt64) {
        let request = entry.request
        guard request.state != .done else { return }
        switch entry.kind {
        case .deadline:
            if !request.started {
                // Never started before its deadline: shed it now rather than keep the caller waiting in a queue
                // that does not move fast enough (its queue entry is skipped when reached).
                statistics.shedRequests += 1
                finish(
                    request, isError: true,
                    body: WireBody.error(.busy, "no worker could start the request before its deadline")
                )
                return
            }
            if !request.firstReplySent {
                request.firstReplySent = true
                statistics.progressReplies += 1
                queueReply(
                    request.key.client,
                    CIP.Broker.reply,
                    id: request.key.id,
                    status: CIP.Status.progress,
                    phase: request.phase.name,
                    body: .bytes(progressBody(request, now: now))
                )
            }
            timers.push(.init(time: request.arrival + hardLimitNanos, kind: .hardLimit, request: request))
        case .hardLimit:
            finish(
                request, isError: true,
                body: WireBody.error(.timeout, "the request did not finish within the hard limit")
            )
        }
    }

    /// Smooths each type's answered-jobs rate over windows of about 100 ms.
    private func updateJobRates(now: UInt64) {
        let elapsed = Double(now - lastRateUpdate) / 1e9
        if lastRateUpdate > 0 && elapsed > 0 {
            // Only a saturated type's answers measure its pace: one that had requests waiting, or whose workers are
            // all full. A type that is not saturated keeps its last pace (a few slow requests, or a quiet spell,
            // must not make the next burst look like a stalled queue); a type with a queue and no answers slows
            // down to nothing, as it should.
            for type in typeAnswered.indices {
                if typeSaturatedSinceUpdate[type] || !typeQueues[type].isEmpty {
                    let sample = Double(typeAnswered[type]) / elapsed
                    typeJobRate[type] = typeJobRate[type] == 0 ? sample : 0.7 * typeJobRate[type] + 0.3 * sample
                }
                typeAnswered[type] = 0
                typeSaturatedSinceUpdate[type] = false
            }
        }
        lastRateUpdate = now
        nextRateUpdate = now + 100_000_000
    }

    private func heartbeat(now: UInt64) {
        for worker in Array(workers.values) {
            if worker.expiry < now {
                logger.warning("worker expired (silent)", metadata: ["worker": "\(worker.name)"])
                removeWorker(worker, reason: "expired")
            } else {
                sendToWorker(worker.routingID, [CIP.workerSignature, CIP.Worker.heartbeat])
            }
        }
        results.expire(now: now)
        // Requests for an intent type that lost its last worker, past the grace period.
        for type in typeQueues.indices where !typeQueues[type].isEmpty && !isServed(type, now: now) {
            let name = String(decoding: typeNames[type], as: UTF8.self)
            while let request = typeQueues[type].popFirst() {
                guard request.state != .done else { continue }
                queuedCount -= 1
                request.state = .running  // not queued any more: keep queuedCount exact in finish()
                finish(
                    request, isError: true,
                    body: WireBody.error(.unknownIntent, "no worker serves intent type \"\(name)\" any more")
                )
            }
        }
    }

    // MARK: Shutdown

    private func beginShutdown() {
        shuttingDown = true
        shutdownDeadline = MonotonicTime.now() + configuration.shutdownGracePeriod.nanoseconds
        logger.info("broker shutting down", metadata: ["in-flight": "\(inflight.count)"])
    }

    private func finishShutdown() {
        flushJobs()
        for request in Array(inflight.values).sorted(by: { $0.arrival < $1.arrival }) {
            finish(request, isError: true, body: WireBody.error(.shuttingDown, "the broker is shutting down"))
        }
        flushReplies()
        for worker in workers.values {
            sendToWorker(worker.routingID, [CIP.workerSignature, CIP.Worker.disconnect])
        }
        if let zap { statistics.rejectedHandshakes = zap.rejected }
        let statistics = statistics
        finalStatistics.withLock { $0 = statistics }
        logger.info("broker stopped", metadata: ["statistics": "\(statistics)"])
        frontend.close()
        backend.close()
        zap?.stop()  // after the sockets it guards, before the context
        context.terminate()
    }
}
