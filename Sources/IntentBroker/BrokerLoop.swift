import IntentJournal
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// The broker's I/O shell: one thread, one `zmq_poll` loop over the frontend and backend ROUTER sockets, around the
/// socket-free ``BrokerCore`` that holds every rule.
///
/// On every wake-up the loop drains every message waiting on both sockets before polling again (the cost of a wake-up
/// is paid once per batch, not per message), decodes frames with IntentWire's decoders, feeds each event to the core,
/// and performs the core's actions in order every 64 messages and at the end of the batch, so that libzmq's I/O
/// thread gets many messages per wake-up. Bodies are moved between sockets as libzmq messages, never parsed or copied.
///
/// Everything here runs on the loop's thread except ``requestStop()``; the core is confined to it.
final class BrokerLoop: @unchecked Sendable {
    let logger: Logger
    let sockets: BrokerSockets
    private let wake = EventFD()
    private let stopRequested = Atomic<Bool>(false)
    let finalStatistics = Mutex(BrokerStatistics())

    /// The rules (loop thread only).
    private var core: BrokerCore<ZMQMessage>
    /// Actions being performed (kept to reuse its storage).
    private var performing: [BrokerAction<ZMQMessage>] = []
    private let clientDecoder: ClientMessageDecoder
    private let workerDecoder: WorkerMessageDecoder
    /// The journal, if the broker keeps one (issue 12): each batch is committed before its actions are performed.
    private let journal: BrokerJournal?
    /// Set when a commit failed: the loop stops without acting on what it could not record.
    private var journalFailure: BrokerError?

    init(configuration: BrokerConfiguration, logger: Logger) throws(BrokerError) {
        self.logger = logger
        if let path = configuration.journalPath {
            let journal = try BrokerJournal(path: path, sync: configuration.journalSync)
            var core = try BrokerCore<ZMQMessage>(
                configuration: configuration, logger: logger, now: MonotonicTime.now(), journaling: true)
            let state = try journal.recover(into: &core)
            self.core = core
            self.journal = journal
            logger.info(
                "journal opened",
                metadata: [
                    "journal": "\(PostgresJournal.isURL(path) ? PostgresJournal.redacted(path) : path)",
                    "requests-recovered": "\(state.requests.count)",
                    "results": "\(state.results.count)", "idempotency-records": "\(state.keyRecords.count)",
                ])
        } else {
            core = try BrokerCore(configuration: configuration, logger: logger, now: MonotonicTime.now())
            journal = nil
            logger.info("no journal: requests in flight and results kept for STATUS are lost if the broker restarts")
        }
        let limits = WireLimits(
            maxBodySize: configuration.maxBodySize, hardLimitMilliseconds: configuration.hardLimit.milliseconds)
        clientDecoder = ClientMessageDecoder(limits: limits)
        workerDecoder = WorkerMessageDecoder(limits: limits)
        sockets = try BrokerSockets(configuration: configuration, logger: logger)
    }

    var frontendEndpoint: String { sockets.frontendEndpoint }
    var backendEndpoint: String { sockets.backendEndpoint }

    /// Asks the loop to shut down gracefully (any thread).
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    // MARK: The loop

    /// Runs the loop until the broker has shut down, then closes the sockets. Throws ``BrokerError/Code/pollFailed``
    /// (after closing them) if waiting on the sockets failed: the broker did not stop because it was asked to.
    func run() throws(BrokerError) {
        let frontend = sockets.frontend
        let backend = sockets.backend
        var poller = ZMQPoller()
        poller.add(frontend)
        poller.add(backend)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        var buffer = ZMQMultipart(capacity: clientDecoder.limits.maxFrames + 1)  // + the routing id
        logger.info("broker ready", metadata: ["frontend": "\(frontendEndpoint)", "backend": "\(backendEndpoint)"])

        var failure: BrokerError?
        while true {
            var now = MonotonicTime.now()
            let wakeAt = core.nextWakeTime
            let timeout = wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0
            do {
                try poller.poll(timeoutMilliseconds: timeout)  // EINTR is retried: it returns 0
            } catch {
                // Not a normal stop: the requests still open end as at shutdown, and run() throws so that the
                // ServiceGroup sees the failure.
                logger.critical("poll failed, broker stops", metadata: ["error": "\(error)"])
                failure = BrokerError(code: .pollFailed, message: "zmq_poll failed: \(error)")
                break
            }
            if poller.isReadable(wakeIndex) {
                wake.drain()
                if stopRequested.load(ordering: .acquiring) { core.beginShutdown(now: MonotonicTime.now()) }
            }
            // Drain everything waiting on both sockets, alternating so neither side starves the other; timers that
            // fall due meanwhile fire between batches, so a flood never delays a deadline reply.
            var budget = 50_000
            while budget > 0 {
                var progressed = false
                if (try? frontend.receive(into: &buffer)) == true {
                    clientMessage(&buffer)
                    progressed = true
                }
                if (try? backend.receive(into: &buffer)) == true {
                    workerMessage(&buffer)
                    progressed = true
                }
                if !progressed { break }
                budget -= 1
                if budget & 63 == 0 { performActions() }
                if budget & 127 == 0 { core.fireDueTimers(now: MonotonicTime.now()) }
            }
            now = MonotonicTime.now()
            core.tick(now: now)
            performActions()
            if journalFailure == nil, let journal {
                do throws(BrokerError) { try journal.syncIfDue() } catch { journalFailure = error }
            }
            if let journalFailure {
                // What could not be recorded is not acted on; the journal holds everything acted on so far, and a
                // broker started again on it finishes the rest.
                logger.critical("journal failed, broker stops", metadata: ["error": "\(journalFailure)"])
                failure = journalFailure
                break
            }
            if core.isDone(now: now) { break }
        }
        if journalFailure == nil {
            core.finishShutdown(now: MonotonicTime.now())
            performActions()
        }
        if let zap = sockets.zap { core.statistics.rejectedHandshakes = zap.rejected }
        let statistics = core.statistics
        finalStatistics.withLock { $0 = statistics }
        // Every ending reply is queued in libzmq: let it reach the network before the sockets close (with the
        // default linger of 0, libzmq would drop whatever it has not written yet).
        let linger = core.configuration.shutdownLinger.milliseconds
        try? sockets.frontend.setOption(.linger, Int32(clamping: linger))
        try? sockets.backend.setOption(.linger, Int32(clamping: min(linger, 1000)))
        logger.info(
            "broker stopped; closing once queued replies are sent",
            metadata: ["statistics": "\(statistics)", "linger-ms": "\(linger)"])
        sockets.close()
        if let journal {
            // Commit latency for operators (the journal's percentiles since it was opened, in microseconds).
            let figures = journal.journal.statistics
            logger.info(
                "journal closed",
                metadata: [
                    "commits": "\(figures.commits)", "operations": "\(figures.operations)",
                    "commit-us-p50": "\(figures.commitLatency.p50)", "commit-us-p99": "\(figures.commitLatency.p99)",
                    "commit-us-max": "\(figures.commitLatency.max)",
                ])
            journal.close()
        }
        if let failure { throw failure }
    }

    // MARK: Events in

    private func clientMessage(_ message: inout ZMQMultipart) {
        let client = message.bytes(0)
        let command: ClientCommand
        do throws(ClientMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(ClientMessageError) in
                try clientDecoder.decode(WireFrames(frames, dropped: dropped))
            }
        } catch {
            core.clientMessageRejected(
                client: client, error, version: Self.answerVersion(message), now: MonotonicTime.now())
            return
        }
        switch command {
        case .request(let request):
            // Only a keyed request needs its body's fingerprint (to tell a retry from a conflicting reuse).
            let fingerprint =
                request.idempotencyKey == nil
                ? nil
                : message.withBytes(1 + ClientRequest.bodyIndex) { BodyFingerprint($0, seeds: core.fingerprintSeeds) }
            // A key's scope is the client's CURVE public key (the user id our ZAP handler gave it); without CURVE,
            // one scope all clients share (PROTOCOL.md 4.10). With CURVE it also lets a CANCEL from another
            // connection of the same key find the request.
            let identity = clientIdentity(message)
            let body = message.take(1 + ClientRequest.bodyIndex)
            core.request(
                request, client: client, body: body, fingerprint: fingerprint, identity: identity,
                now: MonotonicTime.now())
        case .status(let id):
            core.status(client: client, requestID: id, version: Self.answerVersion(message), now: MonotonicTime.now())
        case .ping:
            core.ping(client: client, version: Self.answerVersion(message))
        case .cancel(let id):
            core.cancel(client: client, requestID: id, identity: clientIdentity(message), now: MonotonicTime.now())
        }
    }

    /// The client's CURVE public key as our ZAP handler gave it (the message's `User-Id`), empty without CURVE.
    private func clientIdentity(_ message: borrowing ZMQMultipart) -> [UInt8] {
        guard sockets.zap != nil else { return [] }
        return message.property(1, "User-Id").map { Array($0.utf8) } ?? []
    }

    /// The client protocol version a message's answers use: its signature's (1 when it is not one the broker
    /// speaks: check 2 answers that in version 1). A REQUEST carries its own (``ClientRequest/version``), so the hot
    /// path never looks at the signature twice.
    private static func answerVersion(_ message: borrowing ZMQMultipart) -> UInt8 {
        guard message.count > 1 else { return 1 }
        return message.withBytes(1) { ClientMessageDecoder.version(ofSignature: $0) } ?? 1
    }

    private func workerMessage(_ message: inout ZMQMultipart) {
        let routingID = message.bytes(0)
        let registered = core.isRegistered(routingID)
        let command: WorkerCommand
        do throws(WorkerMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(WorkerMessageError) in
                try workerDecoder.decode(WireFrames(frames, dropped: dropped), isRegistered: registered)
            }
        } catch {
            core.workerMessageRejected(
                routingID: routingID, error, version: Self.workerVersion(message), now: MonotonicTime.now())
            return
        }
        var body: ZMQMessage?
        var version: UInt8 = 1
        switch command {
        case .result: body = message.take(1 + WorkerResult.bodyIndex)
        case .unregistered: version = Self.workerVersion(message)
        default: break
        }
        core.workerMessage(command, from: routingID, resultBody: body, version: version, now: MonotonicTime.now())
    }

    /// The worker protocol version of a message's signature (1 when it is not one the broker speaks).
    private static func workerVersion(_ message: borrowing ZMQMultipart) -> UInt8 {
        guard message.count > 1 else { return 1 }
        return message.withBytes(1) { WorkerMessageDecoder.version(ofSignature: $0) } ?? 1
    }

    // MARK: Actions out

    /// Performs the core's actions in order; performing one may queue more (a JOB that cannot be sent is dispatched
    /// elsewhere), which are performed in the next round.
    private func performActions() {
        while !core.actions.isEmpty || !core.journal.isEmpty || !core.idempotency.changed.isEmpty {
            if let journal {
                // The batch's records first: nothing leaves that is not in the journal.
                guard journalFailure == nil else {
                    core.actions.removeAll()
                    return
                }
                do throws(BrokerError) {
                    try journal.commit(&core)
                } catch {
                    journalFailure = error
                    core.actions.removeAll()
                    return
                }
            } else {
                core.journal.removeAll()
            }
            core.takeActions(into: &performing)
            var index = 0
            while index < performing.count {
                switch performing[index] {
                case .sendJob(let job): sendJob(job, remaining: index + 1)
                case .reply(let reply): sendReply(reply)
                case .pong(let client, let version): sendPong(client, version: version)
                case .control(let routingID, let version, let control):
                    sendControl(control, to: routingID, version: version)
                }
                index += 1
            }
        }
    }

    private func sendJob(_ job: JobDispatch<ZMQMessage>, remaining: Int) {
        let now = MonotonicTime.now()
        guard core.shouldSend(job, now: now) else { return }
        let backend = sockets.backend
        let left = job.deadline > now ? (job.deadline - now) / 1_000_000 : 0
        do {
            guard try backend.send(job.routingID, more: true) else {
                core.jobNotSentWorkerBlocked(job, now: now)
                return
            }
            let version2 = job.version == 2
            try backend.send(CIP.workerSignature(version: job.version), more: true)
            try backend.send(CIP.Worker.job, more: true)
            var id = job.jobID
            try withUnsafeBytes(of: &id) { _ = try backend.send($0, more: true) }
            try backend.send(job.intentType, more: true)
            try backend.send(job.phase.name, more: true)
            try backend.send(String(left), more: true)
            try backend.send(job.body, more: version2)
            if version2 {
                // Version 02 (section 5.13): F7 the idempotency key (empty for none), F8 the attempt.
                try backend.send(job.idempotencyKey ?? [], more: true)
                try backend.send(String(job.attempt))
            }
        } catch {
            logger.debug(
                "JOB not sent: worker unreachable", metadata: ["worker": "\(job.worker)", "error": "\(error)"])
            // This job and the later ones booked for the same worker in this round were never sent.
            var unsent = [job]
            for later in performing[remaining...] {
                if case .sendJob(let other) = later, other.worker == job.worker { unsent.append(other) }
            }
            core.workerUnreachable(job.worker, unsent: unsent, now: MonotonicTime.now())
        }
    }

    /// Sends a REPLY or STATUS answer. One that cannot go out (the client is gone, or its queue is full) is counted
    /// and dropped: sends never block the broker, and the result stays available to STATUS.
    private func sendReply(_ reply: ClientReply<ZMQMessage>) {
        let frontend = sockets.frontend
        do {
            guard try frontend.send(reply.client, more: true) else { return core.replyNotDelivered() }
            try frontend.send(CIP.clientSignature(version: reply.version), more: true)
            try frontend.send(reply.command.frame, more: true)
            try frontend.send(reply.requestID, more: true)
            try frontend.send(reply.status.frame, more: true)
            try frontend.send(reply.phase, more: true)
            let flags = reply.version == 2
            switch reply.payload {
            case .bytes(let bytes): try frontend.send(bytes, more: flags)
            case .body(let message): try frontend.send(message, more: flags)
            }
            // Version 02: F6, the flags.
            if flags { try frontend.send(reply.isReplay ? CIP.Flags.replay : CIP.Flags.none) }
        } catch {
            core.replyNotDelivered()
        }
    }

    private func sendPong(_ client: [UInt8], version: UInt8) {
        let frontend = sockets.frontend
        do {
            guard try frontend.send(client, more: true) else { return core.replyNotDelivered() }
            try frontend.send(CIP.clientSignature(version: version), more: true)
            try frontend.send(CIP.Broker.pong)
        } catch {
            core.replyNotDelivered()
        }
    }

    private func sendControl(_ control: WorkerControl, to routingID: [UInt8], version: UInt8) {
        let backend = sockets.backend
        do {
            guard try backend.send(routingID, more: true) else { return }
            try backend.send(CIP.workerSignature(version: version), more: true)
            switch control {
            case .heartbeat: try backend.send(CIP.Worker.heartbeat)
            case .drainAcknowledged: try backend.send(CIP.Worker.drain)
            case .disconnect: try backend.send(CIP.Worker.disconnect)
            case .error(let code, let message):
                try backend.send(CIP.Worker.error, more: true)
                try backend.send(code.rawValue, more: true)
                try backend.send(message)
            case .cancel(var jobID):
                try backend.send(CIP.Worker.cancel, more: true)
                try withUnsafeBytes(of: &jobID) { _ = try backend.send($0) }
            }
        } catch {}
    }
}
