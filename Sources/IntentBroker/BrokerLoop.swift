import CoreMetrics
import IntentJournal
import IntentWire
import Logging
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The broker's I/O shell: one thread, one `zmq_poll` loop over the frontend and backend ROUTER sockets, around the
/// socket-free ``BrokerCore`` that holds every rule.
///
/// On every wake-up the loop drains every message waiting on both sockets before polling again (the cost of a wake-up
/// is paid once per batch, not per message), decodes frames with IntentWire's decoders, feeds each event to the core,
/// and performs the core's actions in order every 64 messages and at the end of the batch, so that libzmq's I/O
/// thread gets many messages per wake-up. Bodies are moved between sockets as libzmq messages, never parsed or copied.
///
/// Everything here runs on the loop's thread except ``requestStop()``; the core is confined to it. The variables the
/// loop touches per message skip Swift's run-time exclusivity checks (`@exclusivity(unchecked)`, as in
/// ``BrokerRequest``): only the loop's thread touches them, and the loop never passes them `inout` to code that
/// reaches them again. Reading a getter or calling a non-mutating method of the core from here copies the whole core
/// (every table it holds retained and released), so the per-turn reads use stored properties or mutating getters.
final class BrokerLoop: @unchecked Sendable {
    let logger: Logger
    let configuration: BrokerConfiguration
    /// The bound sockets; nil while a standby waits to take over (loop thread once running).
    @exclusivity(unchecked) private(set) var sockets: BrokerSockets?
    /// The endpoints bound last (ephemeral ports resolved), readable from any thread.
    private let bound: Mutex<(frontend: String, backend: String)>
    private let wake = EventFD()
    private let stopRequested = Atomic<Bool>(false)
    /// Whether this standby said so in its log since it last stood by.
    private let standbyAnnounced = Atomic<Bool>(false)
    let finalStatistics = Mutex(BrokerStatistics())
    /// Liveness and readiness, for `/livez` and `/readyz`.
    let health = BrokerHealth()
    /// When the metrics gauges are next set from a snapshot (with a metrics factory).
    @exclusivity(unchecked) private var nextMetricsPublish: UInt64 = 0
    private let journalAvailable: Meter?
    private let commitDuration: CoreMetrics.Timer?

    /// The rules (loop thread only).
    @exclusivity(unchecked) private var core: BrokerCore<ZMQMessage>
    /// Gives the memory of expired results back to the system.
    @exclusivity(unchecked) private var heapTrimmer = HeapTrimmer()
    /// Actions being performed (kept to reuse its storage), and how many of them ``perform()`` has taken.
    @exclusivity(unchecked) private var performing: [BrokerAction<ZMQMessage>] = []
    @exclusivity(unchecked) private var performed = 0
    /// The routing ids of recent clients and workers (loop thread only).
    @exclusivity(unchecked) private var clientIDs = RoutingIDCache()
    @exclusivity(unchecked) private var workerIDs = RoutingIDCache()
    private let clientDecoder: ClientMessageDecoder
    private let workerDecoder: WorkerMessageDecoder
    /// The journal, if the broker keeps one and can reach it (issue 12): each batch is committed before its actions
    /// are performed. Nil while a PostgreSQL journal is unavailable (see ``unavailableSince``).
    @exclusivity(unchecked) private var journal: BrokerJournal?
    /// Set when a commit failed: the loop stops without acting on what it could not record.
    @exclusivity(unchecked) private var journalFailure: JournalError?
    /// Commits the journal's batches on a thread of its own (pipelined with the loop), while ``journal`` is set.
    @exclusivity(unchecked) private var writer: JournalWriter?
    /// Readable when the writer finished a commit.
    private let journalDone = EventFD()
    /// The actions of the commit in flight: performed once it is written.
    @exclusivity(unchecked) private var awaiting: [BrokerAction<ZMQMessage>] = []
    @exclusivity(unchecked) private var commitInFlight = false
    /// Since when the PostgreSQL journal has been unreachable (monotonic ns): meanwhile the broker refuses new work
    /// with `unavailable`, answers PING, sends workers away (DISCONNECT), and opens the journal again every second.
    private var unavailableSince: UInt64?
    /// When to try the unavailable journal again, and when the last warning about it was logged.
    private var nextJournalAttempt: UInt64 = 0
    private var lastUnavailableWarning: UInt64 = 0
    /// The last time the PostgreSQL journal answered (a commit or a leadership check).
    private var lastJournalContact: UInt64 = 0

    /// How the active part of the loop ended.
    private enum Ending {
        case stopped
        case failed(BrokerError)
        /// Another broker took the journal over while this one could not reach it: stand by again.
        case lostLeadership
    }

    init(configuration: BrokerConfiguration, logger: Logger) throws(BrokerError) {
        self.logger = logger
        self.configuration = configuration
        core = try BrokerCore(
            configuration: configuration, logger: logger, now: MonotonicTime.now(),
            journaling: configuration.journalPath != nil)
        core.compactQueuedBody = { $0.compacted() }
        let limits = WireLimits(
            maxBodySize: configuration.maxBodySize, hardLimitMilliseconds: configuration.hardLimit.milliseconds)
        clientDecoder = ClientMessageDecoder(limits: limits)
        workerDecoder = WorkerMessageDecoder(limits: limits)
        bound = Mutex((configuration.frontendEndpoint, configuration.backendEndpoint))
        if let factory = configuration.metricsFactory, configuration.journalPath != nil {
            journalAvailable = Meter(label: "concierge_journal_available", factory: factory)
            commitDuration = CoreMetrics.Timer(label: "concierge_journal_commit_duration_seconds", factory: factory)
        } else {
            journalAvailable = nil
            commitDuration = nil
        }
        if configuration.standby {
            // A standby binds nothing and opens the journal only in run(), where it waits for the leader lock.
            return
        }
        if let path = configuration.journalPath {
            do throws(JournalError) {
                let journal = try BrokerJournal(path: path, sync: configuration.journalSync)
                try recover(from: journal)
            } catch  where error.code == .unavailable && PostgresJournal.isURL(path) {
                // PostgreSQL unreachable at start: bind and refuse work (`unavailable`) until it answers.
                enterUnavailable(error, now: MonotonicTime.now())
            } catch {
                throw BrokerError(code: .journalFailed, message: "\(error)")
            }
        } else {
            logger.info("no journal: requests in flight and results kept for STATUS are lost if the broker restarts")
        }
        try bind()
    }

    /// Reads `journal` into a fresh core and makes both current.
    private func recover(from journal: BrokerJournal) throws(JournalError) {
        var fresh: BrokerCore<ZMQMessage>
        do throws(BrokerError) {
            fresh = try BrokerCore(
                configuration: configuration, logger: logger, now: MonotonicTime.now(), journaling: true)
        } catch {
            throw JournalError(code: .invalidOperation, message: "\(error)")
        }
        fresh.compactQueuedBody = core.compactQueuedBody
        let state = try journal.recover(into: &fresh)
        fresh.statistics = core.statistics
        core = fresh
        self.journal = journal
        writer?.stop()
        writer = JournalWriter(journal: journal.journal, done: journalDone, commitDuration: commitDuration)
        unavailableSince = nil
        lastJournalContact = MonotonicTime.now()
        logger.info(
            "journal opened",
            metadata: [
                "journal": "\(journal.name)", "requests-recovered": "\(state.requests.count)",
                "results": "\(state.results.count)", "idempotency-records": "\(state.keyRecords.count)",
            ])
    }

    private func bind() throws(BrokerError) {
        let sockets = try BrokerSockets(configuration: configuration, logger: logger)
        self.sockets = sockets
        bound.withLock { $0 = (sockets.frontendEndpoint, sockets.backendEndpoint) }
    }

    var frontendEndpoint: String { bound.withLock { $0.frontend } }
    var backendEndpoint: String { bound.withLock { $0.backend } }

    /// Closes the sockets of a broker that never ran (its owner is going away).
    func closeUnstarted() { sockets?.close() }

    /// Asks the loop to shut down gracefully (any thread).
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    private var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    // MARK: The loop

    /// Runs the loop until the broker has shut down, then closes the sockets. A standby first waits for the
    /// journal's leader lock. Throws ``BrokerError/Code/pollFailed`` or ``BrokerError/Code/journalFailed`` (after
    /// closing the sockets) if the broker did not stop because it was asked to.
    func run() throws(BrokerError) {
        while true {
            if sockets == nil {
                guard try standBy() else { return }  // stopped while standing by
            }
            switch runActive() {
            case .stopped:
                finish()
                return
            case .failed(let failure):
                finish()
                throw failure
            case .lostLeadership:
                // Clients and workers must move to the active broker: close our endpoints, then wait for the lock.
                sockets?.close()
                sockets = nil
                journal = nil
                unavailableSince = nil
            }
        }
    }

    /// Waits (binding nothing) until this broker holds the PostgreSQL journal's leader lock, recovers from the
    /// journal and binds. False if asked to stop meanwhile.
    private func standBy() throws(BrokerError) -> Bool {
        guard let path = configuration.journalPath else { return false }
        standbyAnnounced.store(false, ordering: .relaxed)
        health.set(.standingBy)
        var lastWarning: UInt64 = 0
        while !isStopRequested {
            health.turned(MonotonicTime.now())
            do throws(JournalError) {
                let journal = try BrokerJournal(path: path, sync: configuration.journalSync) { [self] in
                    health.turned(MonotonicTime.now())
                    if !standbyAnnounced.exchange(true, ordering: .relaxed) {
                        logger.info(
                            "standing by: another broker is active on the journal; taking over when it stops",
                            metadata: ["journal": "\(PostgresJournal.redacted(path))"])
                    }
                    return !isStopRequested
                }
                try recover(from: journal)
                logger.info("taking over as the active broker", metadata: ["journal": "\(journal.name)"])
                break
            } catch  where error.code == .locked {
                continue  // asked to stop while waiting
            } catch  where error.code == .unavailable {
                let now = MonotonicTime.now()
                if now - lastWarning > 10_000_000_000 || lastWarning == 0 {
                    lastWarning = now
                    logger.warning("standby cannot reach the journal; retrying", metadata: ["error": "\(error)"])
                }
                pause(milliseconds: 1000)
            } catch {
                throw BrokerError(code: .journalFailed, message: "\(error)")
            }
        }
        guard journal != nil else { return false }
        try bind()
        return true
    }

    /// Sleeps up to `milliseconds`, waking early when asked to stop.
    private func pause(milliseconds: Int) {
        var steps = milliseconds / 50
        while steps > 0, !isStopRequested {
            health.turned(MonotonicTime.now())
            var interval = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            var left = timespec()
            while nanosleep(&interval, &left) == -1 && errno == EINTR { interval = left }
            steps -= 1
        }
    }

    /// The loop of an active broker (or one whose journal is unavailable), until it stops, fails, or loses the
    /// journal to another broker.
    private func runActive() -> Ending {
        guard let sockets else { return .stopped }
        let frontend = sockets.frontend
        let backend = sockets.backend
        var poller = ZMQPoller()
        poller.add(frontend)
        poller.add(backend)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        let journalIndex = poller.add(fileDescriptor: journalDone.fileDescriptor)
        var buffer = ZMQMultipart(capacity: clientDecoder.limits.maxFrames + 1)  // + the routing id
        logger.info("broker ready", metadata: ["frontend": "\(frontendEndpoint)", "backend": "\(backendEndpoint)"])
        if isStopRequested { core.beginShutdown(now: MonotonicTime.now()) }

        while true {
            var now = MonotonicTime.now()
            health.turned(now)
            // A stored property, not `isShuttingDown`: a getter of the core, read from here, copies the whole core.
            health.set(core.shutdownDeadline != nil ? .stopping : unavailableSince != nil ? .unavailable : .active)
            health.set(workers: core.workers.count)
            if core.metrics != nil, now >= nextMetricsPublish { publishMetrics(now: now) }
            var wakeAt = min(core.nextWakeTime, core.metrics != nil ? nextMetricsPublish : UInt64.max)
            if unavailableSince != nil {
                wakeAt = min(wakeAt, nextJournalAttempt)
            } else if journal?.isShared == true {
                wakeAt = min(wakeAt, lastJournalContact + Self.leadershipCheckInterval)
            }
            let timeout = wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0
            do {
                try poller.poll(timeoutMilliseconds: timeout)  // EINTR is retried: it returns 0
            } catch {
                // Not a normal stop: the requests still open end as at shutdown, and run() throws so that the
                // ServiceGroup sees the failure.
                logger.critical("poll failed, broker stops", metadata: ["error": "\(error)"])
                return .failed(BrokerError(code: .pollFailed, message: "zmq_poll failed: \(error)"))
            }
            if poller.isReadable(wakeIndex) {
                wake.drain()
                if isStopRequested { core.beginShutdown(now: MonotonicTime.now()) }
            }
            if poller.isReadable(journalIndex), let outcome = writer?.takeOutcome() { commitFinished(outcome) }
            // Drain everything waiting on both sockets, alternating so neither side starves the other; timers that
            // fall due meanwhile fire between batches, so a flood never delays a deadline reply. A socket that had
            // nothing is not asked again in this pass: an empty receive costs libzmq two system calls (its mailbox's
            // poll and its fork check), and what arrives meanwhile makes the next poll return at once.
            var budget = 50_000
            var frontendEmpty = false
            var backendEmpty = false
            while budget > 0 {
                if !frontendEmpty {
                    if (try? frontend.receive(into: &buffer)) == true {
                        clientMessage(&buffer)
                    } else {
                        frontendEmpty = true
                    }
                }
                if !backendEmpty {
                    if (try? backend.receive(into: &buffer)) == true {
                        workerMessage(&buffer)
                    } else {
                        backendEmpty = true
                    }
                }
                if frontendEmpty && backendEmpty { break }
                budget -= 1
                if budget & 63 == 0 {
                    // A commit that finished meanwhile: perform its actions and start the next one now, not after
                    // the drain.
                    if commitInFlight, let outcome = writer?.takeOutcome(drain: false) { commitFinished(outcome) }
                    performActions()
                }
                if budget & 127 == 0 { core.fireDueTimers(now: MonotonicTime.now()) }
            }
            now = MonotonicTime.now()
            core.tick(now: now)
            performActions()
            if heapTrimmer.shouldTrim(holding: core.heldBytes) { HeapTrimmer.trim() }
            if journalFailure == nil, !commitInFlight, let journal {
                do throws(JournalError) {
                    try journal.syncIfDue()
                    if journal.isShared, now >= lastJournalContact + Self.leadershipCheckInterval {
                        // Quiet for a while: ask PostgreSQL whether we still lead, to notice a lost database early.
                        try journal.checkLeadership()
                        lastJournalContact = now
                    }
                } catch {
                    journalFailure = error
                }
            }
            if let failure = journalFailure {
                journalFailure = nil
                if failure.code == .unavailable, journal?.isShared == true {
                    enterUnavailable(failure, now: now)
                } else {
                    // What could not be recorded is not acted on; the journal holds everything acted on so far, and
                    // a broker started again on it finishes the rest.
                    logger.critical("journal failed, broker stops", metadata: ["error": "\(failure)"])
                    journalFailure = failure
                    return .failed(BrokerError(code: .journalFailed, message: "\(failure)"))
                }
            }
            if let journal, now >= nextJournalStatistics {
                if nextJournalStatistics != 0, journal.journal.statistics.commits != commitsLogged {
                    commitsLogged = journal.journal.statistics.commits
                    logJournalStatistics(journal, "journal statistics")
                }
                nextJournalStatistics = now + Self.journalStatisticsInterval
            }
            if unavailableSince != nil, now >= nextJournalAttempt, !isStopRequested {
                if let ending = reopenJournal(now: now) { return ending }
            }
            // The stored property first: calling a non-mutating method of the core from here copies the whole core.
            if core.shutdownDeadline != nil, core.isDone(now: now), !commitInFlight { return .stopped }
        }
    }

    /// How often the metrics gauges are set from a snapshot of the core.
    private static let metricsInterval: UInt64 = 1_000_000_000

    /// Sets the metrics gauges from a snapshot of the core (queues, oldest waits, workers, capacity).
    private func publishMetrics(now: UInt64) {
        nextMetricsPublish = now + Self.metricsInterval
        core.metrics?.publish(core.snapshot(now: now))
        journalAvailable?.set(journal != nil && unavailableSince == nil ? 1 : 0)
    }

    /// Commit count and latency for operators (percentiles since the journal was opened, in microseconds): every
    /// minute while the broker commits, and when it stops.
    private func logJournalStatistics(_ journal: BrokerJournal, _ message: Logger.Message) {
        let figures = journal.journal.statistics
        logger.info(
            message,
            metadata: [
                "commits": "\(figures.commits)", "operations": "\(figures.operations)",
                "commit-us-p50": "\(figures.commitLatency.p50)", "commit-us-p99": "\(figures.commitLatency.p99)",
                "commit-us-max": "\(figures.commitLatency.max)",
            ])
    }

    /// How often the journal's statistics are logged while it commits.
    private static let journalStatisticsInterval: UInt64 = 60_000_000_000
    private var nextJournalStatistics: UInt64 = 0
    private var commitsLogged: UInt64 = 0

    /// How often a quiet broker checks that it still holds the PostgreSQL journal.
    private static let leadershipCheckInterval: UInt64 = 1_000_000_000

    /// The PostgreSQL journal cannot be reached: drop the state it may not hold (the journal holds everything acted
    /// on), send the workers away, and refuse new work until ``reopenJournal(now:)`` succeeds.
    private func enterUnavailable(_ error: JournalError, now: UInt64) {
        logger.error(
            "journal unavailable: refusing new requests (`unavailable`) until the database is back; nothing acknowledged is lost",
            metadata: ["error": "\(error)"])
        // Their jobs belong to state that is about to be dropped; they register again once the journal is back
        // (and cancel the handlers of the connection they leave).
        for worker in core.workers.values {
            core.actions.append(.control(routingID: worker.routingID, version: worker.version, .disconnect))
        }
        let disconnects = core.actions
        // The requests of the batch that could not be recorded were never accepted: say so.
        // (Including what the core accepted after the failed commit and before this point.)
        journal?.failed(pending: core.journal)
        for request in journal?.takeUncommitted() ?? [] {
            core.reject(
                client: request.key.client, requestID: request.key.id, phase: request.phase, version: request.version,
                .unavailable,
                "the broker lost its journal's database before it could accept this request; send it again")
        }
        let refusals = core.actions.suffix(from: disconnects.count)
        writer?.stop()
        writer = nil
        journal?.close()
        journal = nil
        if let empty = try? BrokerCore<ZMQMessage>(
            configuration: configuration, logger: logger, now: now, journaling: true)
        {
            var fresh = empty
            fresh.statistics = core.statistics
            fresh.compactQueuedBody = core.compactQueuedBody
            core = fresh
        }
        core.actions = disconnects + refusals
        unavailableSince = now
        lastUnavailableWarning = now
        nextJournalAttempt = now + 1_000_000_000
        if sockets != nil { performActions() }
    }

    /// Opens the unavailable journal again: on success the broker recovers from it and works again; if another
    /// broker took it over, this one stands by (or stops, without ``BrokerConfiguration/standby``).
    private func reopenJournal(now: UInt64) -> Ending? {
        guard let path = configuration.journalPath else { return nil }
        do throws(JournalError) {
            let journal = try BrokerJournal(path: path, sync: configuration.journalSync)
            try recover(from: journal)
            logger.info("journal back: working again", metadata: ["journal": "\(journal.name)"])
            return nil
        } catch  where error.code == .locked {
            guard configuration.standby else {
                logger.critical("another broker took the journal over; this one stops", metadata: ["error": "\(error)"])
                return .failed(BrokerError(code: .journalFailed, message: "\(error)"))
            }
            logger.warning("another broker took the journal over; standing by")
            return .lostLeadership
        } catch  where error.code == .unavailable {
            nextJournalAttempt = MonotonicTime.now() + 1_000_000_000
            if now - lastUnavailableWarning >= 10_000_000_000 {
                lastUnavailableWarning = now
                logger.warning("journal still unavailable; refusing new requests", metadata: ["error": "\(error)"])
            }
            return nil
        } catch {
            logger.critical("journal failed, broker stops", metadata: ["error": "\(error)"])
            return .failed(BrokerError(code: .journalFailed, message: "\(error)"))
        }
    }

    /// After the loop: the open requests end as at shutdown (unless the journal failed: a broker started again on it
    /// finishes them), the final statistics are kept, the sockets close once queued replies are sent.
    private func finish() {
        health.set(.stopping)
        if unavailableSince == nil, journal != nil || configuration.journalPath == nil {
            flushJournal()
            if journalFailure == nil {
                core.finishShutdown(now: MonotonicTime.now())
                performActions()
                flushJournal()
            }
        } else if unavailableSince != nil {
            logger.warning(
                "stopping while the journal is unavailable: the requests in flight stay in the journal, and a broker started on it finishes them"
            )
        }
        writer?.stop()
        writer = nil
        if let zap = sockets?.zap { core.statistics.rejectedHandshakes = zap.rejected }
        let statistics = core.statistics
        finalStatistics.withLock { $0 = statistics }
        guard let sockets else { return }
        // Every ending reply is queued in libzmq: let it reach the network before the sockets close (with the
        // default linger of 0, libzmq would drop whatever it has not written yet).
        let linger = core.configuration.shutdownLinger.milliseconds
        try? sockets.frontend.setOption(.linger, Int32(clamping: linger))
        try? sockets.backend.setOption(.linger, Int32(clamping: min(linger, 1000)))
        logger.info(
            "broker stopped; closing once queued replies are sent",
            metadata: ["statistics": "\(statistics)", "linger-ms": "\(linger)"])
        sockets.close()
        self.sockets = nil
        if let journal {
            logJournalStatistics(journal, "journal closed")
            journal.close()
        }
    }

    // MARK: Events in

    private func clientMessage(_ message: inout ZMQMultipart) {
        let client = clientIDs.bytes(message, frame: 0)
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
        if unavailableSince != nil {
            refuseWhileUnavailable(command, client: client, version: Self.answerVersion(message))
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

    /// While the journal is unavailable nothing can be recorded, so nothing is accepted: REQUEST, STATUS and CANCEL
    /// are answered `unavailable` (STATUS too: the journal, not this broker's memory, knows the requests); PING is
    /// answered, so that clients keep this connection and retry.
    private func refuseWhileUnavailable(_ command: ClientCommand, client: [UInt8], version: UInt8) {
        let message = "the broker cannot reach its journal's database: nothing was accepted; send again later"
        switch command {
        case .request(let request):
            core.reject(
                client: client, requestID: request.requestID, phase: request.phase.name, version: request.version,
                .unavailable, message)
        case .status(let id), .cancel(let id):
            core.reject(
                client: client, requestID: id, phase: "", version: version, .unavailable, message, command: .status)
        case .ping:
            core.ping(client: client, version: version)
        }
    }

    /// The client's CURVE public key as our ZAP handler gave it (the message's `User-Id`), empty without CURVE.
    private func clientIdentity(_ message: borrowing ZMQMultipart) -> [UInt8] {
        guard sockets?.zap != nil else { return [] }
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
        let routingID = workerIDs.bytes(message, frame: 0)
        // STATS (section 5.14): a query any peer may send, registered or not, answered at once (even while the
        // journal is unavailable); the core never sees it. One frame compare on the hot path.
        if message.count > CIP.Frames.stats, message.equals(2, CIP.Worker.stats) {
            do throws(WorkerMessageError) {
                let query = try message.withFrames(from: 1) { frames, dropped throws(WorkerMessageError) in
                    try workerDecoder.isStatsQuery(WireFrames(frames, dropped: dropped))
                }
                if query { return answerStats(to: routingID, version: Self.workerVersion(message)) }
            } catch {
                core.workerMessageRejected(
                    routingID: routingID, error, version: Self.workerVersion(message), now: MonotonicTime.now())
                return
            }
        }
        if unavailableSince != nil {
            // No jobs while nothing can be recorded: send the worker away; it registers again later.
            core.actions.append(.control(routingID: routingID, version: Self.workerVersion(message), .disconnect))
            return
        }
        // The stored table, not `isRegistered(_:)`: calling a non-mutating method of the core from here copies it.
        let registered = core.workerIDs[ByteKey(routingID)] != nil
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
        case .result:
            // Its own allocation (ZMQMultipart.takeCompacted): a final reply is kept for STATUS and replays, and the
            // frame as received would keep libzmq's whole receive buffer (8 KiB and more) for as long (issue 14).
            body = message.takeCompacted(1 + WorkerResult.bodyIndex)
        case .unregistered: version = Self.workerVersion(message)
        default: break
        }
        core.workerMessage(command, from: routingID, resultBody: body, version: version, now: MonotonicTime.now())
    }

    /// Answers STATS with a snapshot of the core: empty while the journal is unavailable (the core holds nothing
    /// then), `stopping` once the broker shuts down. The answer has the query's signature (`CIPW02` or `CIPW03`).
    private func answerStats(to routingID: [UInt8], version: UInt8) {
        guard let backend = sockets?.backend else { return }
        let snapshot = core.snapshot(now: MonotonicTime.now())
        let intents = core.workers.values.sorted { $0.id < $1.id }.map { worker in
            worker.intentTypes.map { core.intentTypes[$0].displayName }
        }
        let state = core.isShuttingDown ? "stopping" : unavailableSince != nil ? "unavailable" : "active"
        var stats = BrokerStats(
            snapshot, workerIntents: intents, state: state, defaultDeadline: configuration.defaultDeadline)
        for index in stats.intentTypes.indices {
            guard let type = core.intentTypeIndex[ByteKey(Array(stats.intentTypes[index].name.utf8))] else { continue }
            stats.intentTypes[index].definitions = core.intentTypes[type].definitions.map { served in
                BrokerStats.Definition(
                    digest: served.definition.digest, version: served.definition.version,
                    workers: served.workers.compactMap { core.workers[$0]?.name }, definition: served.definition.json)
            }
        }
        do {
            guard try backend.send(routingID, more: true) else { return }
            try backend.send(CIP.workerSignature(version: version), more: true)
            try backend.send(CIP.Worker.stats, more: true)
            try backend.send(stats.serialized())
        } catch {}
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
            if let journal, let writer {
                // The batch's records first: nothing leaves that is not in the journal. While a commit is being
                // written, what the core decides meanwhile waits, and goes into the next commit.
                guard journalFailure == nil else {
                    core.actions.removeAll()
                    return
                }
                if commitInFlight { return }
                if let operations = journal.prepare(&core) {
                    core.takeActions(into: &awaiting)
                    commitInFlight = true
                    writer.submit(operations)
                    return
                }
            } else {
                // No journal, or (unavailable) a core that refuses every request: nothing to record.
                core.journal.removeAll()
                if !core.idempotency.changed.isEmpty { _ = core.idempotency.takeChanges() }
            }
            core.takeActions(into: &performing)
            perform()
        }
    }

    /// The writer finished the commit in flight: perform its actions (or, if it failed, drop them), then commit
    /// what gathered meanwhile.
    private func commitFinished(_ outcome: Result<Void, JournalError>) {
        commitInFlight = false
        switch outcome {
        case .success:
            journal?.committed()
            lastJournalContact = MonotonicTime.now()
            swap(&performing, &awaiting)
            perform()
            awaiting.removeAll(keepingCapacity: true)
            performActions()
        case .failure(let error):
            journal?.failed(pending: [])
            journalFailure = error
            awaiting.removeAll()
            core.actions.removeAll()
        }
    }

    /// Waits for the commit in flight, and the ones it leads to, to be written and their actions performed.
    private func flushJournal() {
        while commitInFlight, let writer { commitFinished(writer.wait()) }
    }

    /// Performs ``performing`` in order; performing one may queue more in the core (a JOB that cannot be sent is
    /// dispatched elsewhere), which the caller performs next.
    ///
    /// Each action is moved out of the batch, not copied (a copy of a JOB retains and releases each of its arrays and
    /// its body): swapped with a placeholder that owns nothing, and the placeholders are dropped at the end.
    private func perform() {
        performed = 0
        while performed < performing.count {
            var action = Self.placeholder
            swap(&action, &performing[performed])
            performed += 1
            switch action {
            case .sendJob(let job): sendJob(job)
            case .reply(let reply): sendReply(reply)
            case .pong(let client, let version): sendPong(client, version: version)
            case .control(let routingID, let version, let control):
                sendControl(control, to: routingID, version: version)
            }
        }
        performing.removeAll(keepingCapacity: true)
    }

    /// What ``perform()`` leaves in the batch in place of an action it took: an empty array and a number.
    private static var placeholder: BrokerAction<ZMQMessage> { .pong(client: [], version: 0) }

    private func sendJob(_ job: JobDispatch<ZMQMessage>) {
        let now = MonotonicTime.now()
        guard core.shouldSend(job, now: now) else { return }
        guard let backend = sockets?.backend else { return }
        let left = job.deadline > now ? (job.deadline - now) / 1_000_000 : 0
        do {
            guard try backend.send(job.routingID, more: true) else {
                core.jobNotSentWorkerBlocked(job, now: now)
                return
            }
            let version2 = job.version >= 2
            try backend.send(CIP.workerSignature(version: job.version), more: true)
            try backend.send(CIP.Worker.job, more: true)
            var id = job.jobID
            try withUnsafeBytes(of: &id) { _ = try backend.send($0, more: true) }
            try backend.send(job.intentType, more: true)
            try backend.send(job.phase.name, more: true)
            try backend.send(decimal: left, more: true)
            try backend.send(job.body, more: version2)
            if version2 {
                // Version 02 (section 5.13): F7 the idempotency key (empty for none), F8 the attempt.
                try backend.send(job.idempotencyKey ?? [], more: true)
                try backend.send(decimal: UInt64(job.attempt), more: job.version >= 3)
                // Version 03 (section 5.15): F9 the last phase the worker runs.
                if job.version >= 3 { try backend.send(job.lastPhase.name) }
            }
        } catch {
            logger.debug(
                "JOB not sent: worker unreachable", metadata: ["worker": "\(job.worker)", "error": "\(error)"])
            // This job and the later ones booked for the same worker in this round were never sent.
            var unsent = [job]
            for later in performing[performed...] {  // the batch's actions not performed yet, in order
                if case .sendJob(let other) = later, other.worker == job.worker { unsent.append(other) }
            }
            core.workerUnreachable(job.worker, unsent: unsent, now: MonotonicTime.now())
        }
    }

    /// Sends a REPLY or STATUS answer. One that cannot go out (the client is gone, or its queue is full) is counted
    /// and dropped: sends never block the broker, and the result stays available to STATUS.
    private func sendReply(_ reply: ClientReply<ZMQMessage>) {
        guard let frontend = sockets?.frontend else { return }
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
        guard let frontend = sockets?.frontend else { return }
        do {
            guard try frontend.send(client, more: true) else { return core.replyNotDelivered() }
            try frontend.send(CIP.clientSignature(version: version), more: true)
            try frontend.send(CIP.Broker.pong)
        } catch {
            core.replyNotDelivered()
        }
    }

    private func sendControl(_ control: WorkerControl, to routingID: [UInt8], version: UInt8) {
        guard let backend = sockets?.backend else { return }
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
