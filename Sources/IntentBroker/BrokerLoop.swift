import CoreMetrics
import IntentJournal
import IntentPermissions
import IntentWire
import Logging
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The broker's I/O shell: one thread, one `zmq_poll` loop over the frontend and backend ROUTER sockets, around the
/// socket-free ``BrokerCore`` that holds every rule, the journal link's included.
///
/// It polls, decodes (`+Messages`), calls the core, and performs what the core decides: frames to send (`+Actions`),
/// batches to hand to the ``JournalWriter``, the journal to open, sync or close (``JournalLinkAction``). On every
/// wake-up it drains every message waiting on both sockets before polling again (a wake-up is paid once per batch,
/// not per message) and performs the core's actions every 64 messages and at the end of the batch. Bodies move
/// between sockets as libzmq messages, never parsed or copied.
///
/// Everything here runs on the loop's thread except ``requestStop()``; the core is confined to it. The variables the
/// loop touches per message skip Swift's run-time exclusivity checks (`@exclusivity(unchecked)`): only the loop's
/// thread touches them, and the loop never passes them `inout` to code that reaches them again.
final class BrokerLoop: @unchecked Sendable {
    let logger: Logger
    let configuration: BrokerConfiguration
    /// The bound sockets; nil while a standby waits to take over (loop thread once running).
    @exclusivity(unchecked) private(set) var sockets: BrokerSockets?
    /// The endpoints bound last (ephemeral ports resolved), readable from any thread.
    private let bound: Mutex<(frontend: String, backend: String)>
    private let wake = EventFD()
    private let stopRequested = Atomic<Bool>(false)
    /// Permissions handed over by ``replacePermissions(_:)``, not yet in force (`.some(nil)`: none).
    private let pendingPermissions = Mutex<Permissions??>(nil)
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
    @exclusivity(unchecked) var core: BrokerCore<ZMQMessage>
    /// Gives the memory of expired results back to the system.
    @exclusivity(unchecked) private var heapTrimmer = HeapTrimmer()
    /// Actions being performed (kept to reuse its storage), and how many of them ``perform()`` has taken.
    @exclusivity(unchecked) var performing: [BrokerAction<ZMQMessage>] = []
    @exclusivity(unchecked) var performed = 0
    /// The journal entries of the batch being committed (kept to reuse its storage).
    @exclusivity(unchecked) private var entries: [JournalEntry<ZMQMessage>] = []
    /// The routing ids of recent clients and workers (loop thread only).
    @exclusivity(unchecked) var clientIDs = RoutingIDCache()
    @exclusivity(unchecked) var workerIDs = RoutingIDCache()
    /// Where recorded conversations' transcripts go (with a transcript directory).
    let transcripts: BrokerTranscripts?
    /// The spans of requests and jobs, with ``BrokerConfiguration/tracing`` (nil without: one nil check per JOB).
    let spans: BrokerSpans?
    let clientDecoder: ClientMessageDecoder
    let workerDecoder: WorkerMessageDecoder
    /// The journal and the thread that commits its batches (pipelined with the loop), while the core's journal link
    /// is open.
    @exclusivity(unchecked) private var journal: BrokerJournal?
    @exclusivity(unchecked) private var writer: JournalWriter?
    /// With ``BrokerConfiguration/auditLog``: the thread that writes the audit log.
    private let auditWriter: AuditWriter?
    /// Readable when the writer finished a commit.
    private let journalDone = EventFD()
    /// When the journal's statistics are next logged, and the commits counted when they were last.
    private var nextJournalStatistics: UInt64 = 0
    private var commitsLogged: UInt64 = 0

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
        transcripts = configuration.transcriptDirectory.map { BrokerTranscripts(directory: $0, logger: logger) }
        spans = configuration.tracing ? BrokerSpans() : nil
        auditWriter = try configuration.auditLog.map { path throws(BrokerError) in try AuditWriter(destination: path) }
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
            core.standBy(now: MonotonicTime.now())
            return
        }
        if configuration.journalPath == nil {
            logger.info("no journal: requests in flight and results kept for STATUS are lost if the broker restarts")
        } else if case .stop(let error) = openJournal() {
            throw BrokerError(code: .journalFailed, message: "\(error)")
        }
        try bind()
    }

    private func bind() throws(BrokerError) {
        let sockets = try BrokerSockets(configuration: configuration, logger: logger)
        self.sockets = sockets
        bound.withLock { $0 = (sockets.frontendEndpoint, sockets.backendEndpoint) }
    }

    var frontendEndpoint: String { bound.withLock { $0.frontend } }
    var backendEndpoint: String { bound.withLock { $0.backend } }

    /// Closes the sockets of a broker that never ran (its owner is going away).
    func closeUnstarted() {
        sockets?.close()
        auditWriter?.stop()
    }

    /// Asks the loop to shut down gracefully (any thread).
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    private var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Hands new permissions to the loop (any thread); they are in force from its next wake-up.
    func replacePermissions(_ permissions: Permissions?) {
        pendingPermissions.withLock { $0 = .some(permissions) }
        wake.signal()
    }

    /// Puts handed-over permissions in force (loop thread).
    private func applyPendingPermissions() {
        guard let permissions = pendingPermissions.withLock({ $0.take() }) else { return }
        sockets?.setHandover(permissions: permissions != nil)
        core.replacePermissions(permissions, now: MonotonicTime.now())
    }

    // MARK: The loop

    /// Runs the loop until the broker has shut down, then closes the sockets. A standby first waits for the
    /// journal's leader lock. Throws ``BrokerError/Code/pollFailed`` or ``BrokerError/Code/journalFailed`` (after
    /// closing the sockets) if the broker did not stop because it was asked to.
    func run() throws(BrokerError) {
        while true {
            if sockets == nil {
                guard try standBy() else {  // stopped while standing by
                    auditWriter?.stop()
                    return
                }
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
            }
        }
    }

    /// The loop of an active broker (or one whose journal is unavailable), until it stops, fails, or loses the
    /// journal to another broker.
    private func runActive() -> Ending {
        guard let sockets else { return .stopped }
        var poller = ZMQPoller()
        poller.add(sockets.frontend)
        poller.add(sockets.backend)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        let journalIndex = poller.add(fileDescriptor: journalDone.fileDescriptor)
        var buffer = ZMQMultipart(capacity: clientDecoder.limits.maxFrames + 1)  // + the routing id
        logger.info("broker ready", metadata: ["frontend": "\(frontendEndpoint)", "backend": "\(backendEndpoint)"])
        if isStopRequested { core.beginShutdown(now: MonotonicTime.now()) }
        applyPendingPermissions()
        while true {
            let now = MonotonicTime.now()
            report(now: now)
            let wakeAt = min(core.nextWakeTime, core.metrics != nil ? nextMetricsPublish : UInt64.max)
            do {
                // EINTR is retried: it returns 0.
                try poller.poll(timeoutMilliseconds: wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0)
            } catch {
                // Not a normal stop: the requests still open end as at shutdown, and run() throws so that the
                // ServiceGroup sees the failure.
                logger.critical("poll failed, broker stops", metadata: ["error": "\(error)"])
                return .failed(BrokerError(code: .pollFailed, message: "zmq_poll failed: \(error)"))
            }
            if poller.isReadable(wakeIndex) {
                wake.drain()
                if isStopRequested { core.beginShutdown(now: MonotonicTime.now()) }
                applyPendingPermissions()
            }
            if poller.isReadable(journalIndex), let outcome = writer?.takeOutcome() { commitFinished(outcome) }
            drain(sockets, into: &buffer)
            let end = MonotonicTime.now()
            core.tick(now: end)
            performActions()
            if heapTrimmer.shouldTrim(holding: core.heldBytes) { HeapTrimmer.trim() }
            if let ending = perform(core.journalDue(now: end, stopping: isStopRequested)) { return ending }
            logJournalStatisticsIfDue(now: end)
            if core.shutdownDeadline != nil, core.isDone(now: end), !core.journalLink.isCommitting { return .stopped }
        }
    }

    /// Drains everything waiting on both sockets, taking turns (``DrainTurns``) so neither side holds the other
    /// back; the core's actions are performed after every batch of messages, and timers that fall due meanwhile fire
    /// between batches, so a flood never delays a deadline reply.
    private func drain(_ sockets: BrokerSockets, into buffer: inout ZMQMultipart) {
        var turns = DrainTurns()
        repeat {
            if turns.shouldRead(.frontend) {
                if (try? sockets.frontend.receive(into: &buffer)) == true {
                    clientMessage(&buffer)
                } else {
                    turns.foundEmpty(.frontend)
                }
            }
            if turns.shouldRead(.backend) {
                if (try? sockets.backend.receive(into: &buffer)) == true {
                    workerMessage(&buffer)
                } else {
                    turns.foundEmpty(.backend)
                }
            }
            guard turns.endTurn() else { break }
            if turns.isBatchEnd {
                // A commit that finished meanwhile: perform its actions and start the next one now, not after the
                // drain.
                if core.journalLink.isCommitting, let outcome = writer?.takeOutcome(drain: false) {
                    commitFinished(outcome)
                }
                performActions()
            }
            if turns.isTimerCheck { core.fireDueTimers(now: MonotonicTime.now()) }
        } while true
    }

    /// Health for `/readyz`, and the metrics gauges about once a second.
    private func report(now: UInt64) {
        health.turned(now)
        health.set(
            core.isShuttingDown ? .stopping : core.journalLink.isUnavailable ? .unavailable : .active)
        health.set(workers: core.workers.count)
        guard core.metrics != nil, now >= nextMetricsPublish else { return }
        nextMetricsPublish = now + 1_000_000_000
        core.metrics?.publish(core.snapshot(now: now))
        journalAvailable?.set(core.journalLink.isOpen ? 1 : 0)
    }

    // MARK: The journal

    /// Performs the core's actions: at once, or once the commit of the batch that decided them is written.
    func performActions() {
        if let auditWriter, !core.auditRecords.isEmpty { auditWriter.submit(core.takeAuditRecords()) }
        while true {
            switch core.nextBatch(actions: &performing, entries: &entries) {
            case .wait:
                return
            case .perform:
                perform()
            case .commit(let changed):
                guard let journal, let writer else { preconditionFailure("the core commits only to an open journal") }
                writer.submit(journal.operations(entries, changed: changed, core: &core))
                entries.removeAll(keepingCapacity: true)
            }
        }
    }

    /// The writer finished the commit in flight: perform its actions (none if it failed), then commit what gathered
    /// meanwhile.
    private func commitFinished(_ outcome: Result<Void, JournalError>) {
        core.commitFinished(outcome, into: &performing, now: MonotonicTime.now())
        perform()
        performActions()
    }

    /// Waits for the commit in flight, and the ones it leads to, to be written and their actions performed.
    private func flushJournal() {
        while core.journalLink.isCommitting, let writer { commitFinished(writer.wait()) }
    }

    /// Does what the core asks of the journal; how the active loop ends when the broker must stop or stand by.
    private func perform(_ action: JournalLinkAction) -> Ending? {
        switch action {
        case .none, .retryLater:
            return nil
        case .sync(let checkLeadership):
            do throws(JournalError) {
                try journal?.syncIfDue()
                if checkLeadership {
                    // Quiet for a while: ask PostgreSQL whether we still lead, to notice a lost database early.
                    try journal?.checkLeadership()
                    core.journalAnswered(now: MonotonicTime.now())
                }
                return nil
            } catch {
                core.journalFailed(error, now: MonotonicTime.now())
                return perform(core.journalDue(now: MonotonicTime.now()))
            }
        case .close:
            closeJournal()
            if sockets != nil { performActions() }
            return nil
        case .reopen:
            let outcome = openJournal()
            if core.journalLink.isOpen { logger.info("journal back: working again") }
            return perform(outcome)
        case .standBy:
            return .lostLeadership
        case .stop(let error):
            return .failed(BrokerError(code: .journalFailed, message: "\(error)"))
        }
    }

    /// Opens the journal, recovers the core from it and starts its writer; on failure, what the core makes of it.
    private func openJournal(standingBy: (@Sendable () -> Bool)? = nil) -> JournalLinkAction {
        guard let path = configuration.journalPath else { return .none }
        var opened: BrokerJournal?
        do throws(JournalError) {
            let journal = try BrokerJournal(path: path, sync: configuration.journalSync, standingBy: standingBy)
            opened = journal
            core.journalOpened(now: MonotonicTime.now())
            let state = try journal.recover(into: &core)
            self.journal = journal
            writer = JournalWriter(journal: journal.journal, done: journalDone, commitDuration: commitDuration)
            logger.info(
                "journal opened",
                metadata: [
                    "journal": "\(journal.name)", "requests-recovered": "\(state.requests.count)",
                    "results": "\(state.results.count)", "idempotency-records": "\(state.keyRecords.count)",
                ])
            return .none
        } catch {
            opened?.close()
            return core.journalOpenFailed(error, now: MonotonicTime.now())
        }
    }

    private func closeJournal() {
        writer?.stop()
        writer = nil
        if let auditWriter {
            if !core.auditRecords.isEmpty { auditWriter.submit(core.takeAuditRecords()) }
            auditWriter.stop()
            core.statistics.auditRecordsDropped = auditWriter.dropped
            if auditWriter.dropped > 0 {
                logger.warning(
                    "audit log records dropped: the writer could not keep up",
                    metadata: ["dropped": "\(auditWriter.dropped)"])
            }
        }
        journal?.close()
        journal = nil
    }

    /// Waits (binding nothing) until this broker holds the PostgreSQL journal's leader lock, recovers from the
    /// journal and binds. False if asked to stop meanwhile.
    private func standBy() throws(BrokerError) -> Bool {
        guard configuration.journalPath != nil else { return false }
        standbyAnnounced.store(false, ordering: .relaxed)
        health.set(.standingBy)
        while !isStopRequested, core.journalLink.isStandingBy {
            health.turned(MonotonicTime.now())
            let outcome = openJournal { [self] in
                health.turned(MonotonicTime.now())
                if !standbyAnnounced.exchange(true, ordering: .relaxed) {
                    logger.info(
                        "standing by: another broker is active on the journal; taking over when it stops",
                        metadata: ["journal": "\(JournalLocation.redacted(configuration.journalPath ?? ""))"])
                }
                return !isStopRequested
            }
            switch outcome {
            case .retryLater: pause(milliseconds: 1000)
            case .stop(let error): throw BrokerError(code: .journalFailed, message: "\(error)")
            default: break
            }
        }
        guard let journal, core.journalLink.isOpen else { return false }
        logger.info("taking over as the active broker", metadata: ["journal": "\(journal.name)"])
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

    private func logJournalStatisticsIfDue(now: UInt64) {
        guard let journal, now >= nextJournalStatistics else { return }
        if nextJournalStatistics != 0, journal.journal.statistics.commits != commitsLogged {
            commitsLogged = journal.journal.statistics.commits
            logJournalStatistics(journal, "journal statistics")
        }
        nextJournalStatistics = now + 60_000_000_000
    }

    // MARK: Stopping

    /// After the loop: the open requests end as at shutdown (unless the journal failed or is unavailable: a broker
    /// started again on it finishes them), the final statistics are kept, the sockets close once queued replies are
    /// sent.
    private func finish() {
        health.set(.stopping)
        if core.journalLink.isUnavailable {
            logger.warning(
                "stopping while the journal is unavailable: the requests in flight stay in the journal, and a broker started on it finishes them"
            )
        } else {
            flushJournal()
            if !core.journalLink.hasFailed {
                core.finishShutdown(now: MonotonicTime.now())
                performActions()
                flushJournal()
            }
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
}
