import IntentJournal
import IntentWire
import Logging

/// The journal link's rules (`Docs/JOURNAL.md`): nothing leaves before it is recorded (commits pipelined with the
/// loop), a failed commit stops the broker or (a PostgreSQL journal that cannot be reached) makes it refuse work
/// until the database is back, a broker that lost the journal to another stands by, and a standby takes over when
/// the lock is free. The shell performs what these decide (``JournalLinkAction``) and reports the outcome.
extension BrokerCore {
    // MARK: Batches

    /// The next thing the shell does with what the core decided: perform `actions` at once (no journal, or nothing
    /// to record), or commit `entries` first (their actions wait in the core for the commit), or wait (a commit is
    /// in flight, or the journal failed: then what was decided is dropped, never acted on).
    mutating func nextBatch(
        actions buffer: inout [BrokerAction<Body>], entries: inout [JournalEntry<Body>]
    ) -> BatchStep {
        switch journalLink.state {
        case .committing:
            return .wait
        case .failed:
            actions.removeAll()
            return .wait
        case .idle:
            let changed = takeJournal(into: &entries)
            if entries.isEmpty && changed.isEmpty {
                if actions.isEmpty { return .wait }
                takeActions(into: &buffer)
                return .perform
            }
            Self.noteAccepted(entries, into: &journalLink.submitted)
            journalLink.awaiting.removeAll(keepingCapacity: true)
            swap(&journalLink.awaiting, &actions)
            journalLink.state = .committing
            return .commit(changed: changed)
        case .none, .unavailable, .standingBy:
            // Nothing to record: no journal, or a core that refuses every request.
            journal.removeAll()
            if !idempotency.changed.isEmpty { _ = idempotency.takeChanges() }
            if actions.isEmpty { return .wait }
            takeActions(into: &buffer)
            return .perform
        }
    }

    /// The commit in flight is written (its actions are moved into `buffer`, to be performed now, before anything
    /// decided since), or it failed (its actions are dropped; the end of the turn decides what follows).
    mutating func commitFinished(
        _ outcome: Result<Void, JournalError>, into buffer: inout [BrokerAction<Body>], now: UInt64
    ) {
        buffer.removeAll(keepingCapacity: true)
        guard journalLink.state == .committing else { return }
        switch outcome {
        case .success:
            journalLink.state = .idle
            journalLink.lastContact = now
            journalLink.submitted.removeAll(keepingCapacity: true)
            swap(&buffer, &journalLink.awaiting)
        case .failure(let error):
            journalLink.state = .failed(error)
            journalLink.awaiting.removeAll()
            actions.removeAll()
        }
    }

    // MARK: The end of a turn

    /// What the journal needs at the end of the loop's turn: a sync (and, when quiet for a second, a leadership
    /// check), another attempt to open an unreachable journal, or, after a failure, going unavailable or stopping.
    /// `stopping`: the broker was asked to stop (an unreachable journal is not opened again then).
    mutating func journalDue(now: UInt64, stopping: Bool = false) -> JournalLinkAction {
        switch journalLink.state {
        case .idle:
            let check =
                journalLink.isShared && now >= journalLink.lastContact &+ JournalLink<Body>.leadershipCheckInterval
            return .sync(checkLeadership: check)
        case .failed(let error):
            if error.code == .unavailable, journalLink.isShared {
                enterUnavailable(error, now: now)
                return .close
            }
            // What could not be recorded is not acted on; the journal holds everything acted on so far, and a
            // broker started again on it finishes the rest.
            logger.critical("journal failed, broker stops", metadata: ["error": "\(error)"])
            return .stop(error)
        case .unavailable(_, let next, _):
            return now >= next && !stopping ? .reopen : .none
        case .none, .committing, .standingBy:
            return .none
        }
    }

    /// The journal answered a leadership check.
    mutating func journalAnswered(now: UInt64) {
        journalLink.lastContact = now
    }

    /// A sync or a leadership check failed (a failed commit is ``commitFinished(_:into:now:)``): nothing more is
    /// acted on; ``journalDue(now:stopping:)`` decides what follows.
    mutating func journalFailed(_ error: JournalError, now: UInt64) {
        guard journalLink.isOpen else { return }
        journalLink.state = .failed(error)
        actions.removeAll()
    }

    // MARK: Opening

    /// The journal was opened (at start, again after an outage, or on taking over as a standby): the core starts
    /// afresh (the statistics stay), ready for the journal's recovery (``restore(requests:results:keyRecords:nextRequestID:now:)``).
    mutating func journalOpened(now: UInt64) {
        let pending = actions
        startAfresh(now: now)
        actions = pending
        journalLink.state = .idle
        journalLink.lastContact = now
    }

    /// Opening the journal (or recovering from it) failed: a PostgreSQL journal that cannot be reached is tried
    /// again (a standby waits a second; an active broker refuses work meanwhile); one that another broker holds
    /// makes this broker stand by (with ``BrokerConfiguration/standby``) or stop; anything else stops it.
    mutating func journalOpenFailed(_ error: JournalError, now: UInt64) -> JournalLinkAction {
        switch (journalLink.state, error.code) {
        case (.standingBy, .locked):
            return .none  // asked to stop while waiting for the lock
        case (.standingBy(let last), .unavailable):
            if last == 0 || now - last > JournalLink<Body>.warningInterval {
                journalLink.state = .standingBy(lastWarning: now)
                logger.warning("standby cannot reach the journal; retrying", metadata: ["error": "\(error)"])
            }
            return .retryLater
        case (.unavailable(let since, _, let last), .unavailable):
            var warned = last
            if now - last >= JournalLink<Body>.warningInterval {
                warned = now
                logger.warning("journal still unavailable; refusing new requests", metadata: ["error": "\(error)"])
            }
            journalLink.state = .unavailable(
                since: since, nextAttempt: now &+ JournalLink<Body>.reopenInterval, lastWarning: warned)
            return .none
        case (.unavailable, .locked) where configuration.standby:
            logger.warning("another broker took the journal over; standing by")
            standBy(now: now)
            return .standBy
        case (.unavailable, .locked):
            logger.critical("another broker took the journal over; this one stops", metadata: ["error": "\(error)"])
            journalLink.state = .failed(error)
            return .stop(error)
        case (_, .unavailable) where journalLink.isShared:
            // At start: bind, and refuse work until the database answers.
            enterUnavailable(error, now: now)
            return .close
        default:
            logger.critical("journal failed, broker stops", metadata: ["error": "\(error)"])
            journalLink.state = .failed(error)
            return .stop(error)
        }
    }

    /// The broker stands by (at start with ``BrokerConfiguration/standby``, or after losing the journal): it holds
    /// nothing, and waits for the journal's leader lock.
    mutating func standBy(now: UInt64) {
        startAfresh(now: now)
        journalLink.state = .standingBy(lastWarning: 0)
    }

    // MARK: Unavailable

    /// The PostgreSQL journal cannot be reached: drop the state it may not hold (the journal holds everything acted
    /// on), send the workers away, answer `unavailable` to the requests that were never recorded, and refuse new
    /// work until the journal opens again.
    mutating func enterUnavailable(_ error: JournalError, now: UInt64) {
        logger.error(
            "journal unavailable: refusing new requests (`unavailable`) until the database is back; nothing acknowledged is lost",
            metadata: ["error": "\(error)"])
        // Their jobs belong to state that is about to be dropped; they register again once the journal is back
        // (and cancel the handlers of the connection they leave).
        for worker in workers.values.sorted(by: { $0.id < $1.id }) {
            actions.append(.control(routingID: worker.routingID, version: worker.version, .disconnect))
        }
        // The requests of the commit that failed, and those accepted after it, were never recorded: never accepted.
        var refused = journalLink.submitted
        journalLink.submitted.removeAll()
        Self.noteAccepted(journal, into: &refused)
        for request in refused {
            reject(
                client: request.key.client, requestID: request.key.id, phase: request.phase,
                version: request.version, .unavailable,
                "the broker lost its journal's database before it could accept this request; send it again")
        }
        let pending = actions
        startAfresh(now: now)
        actions = pending
        journalLink.state = .unavailable(
            since: now, nextAttempt: now &+ JournalLink<Body>.reopenInterval, lastWarning: now)
    }

    /// While the journal is unavailable nothing can be recorded, so nothing is accepted: REQUEST, STATUS and CANCEL
    /// are answered `unavailable` (STATUS too: the journal, not this broker's memory, knows the requests); PING is
    /// answered, so that clients keep this connection and retry.
    mutating func refuseWhileUnavailable(_ command: ClientCommand, client: [UInt8], version: UInt8) {
        let message = "the broker cannot reach its journal's database: nothing was accepted; send again later"
        switch command {
        case .request(let request):
            reject(
                client: client, requestID: request.requestID, phase: request.phase.name, version: request.version,
                .unavailable, message)
        case .status(let id), .cancel(let id):
            reject(client: client, requestID: id, phase: "", version: version, .unavailable, message, command: .status)
        case .ping:
            ping(client: client, version: version)
        case .turn(let turn):
            reject(client: client, requestID: turn.requestID, phase: "", version: turn.version, .unavailable, message)
        case .readConversation(let id), .endConversation(let id):
            reject(
                client: client, requestID: id, phase: "", version: max(3, version), .unavailable, message,
                command: .conversation)
        }
    }

    /// A worker's message while the journal is unavailable: no jobs while nothing can be recorded, so the worker is
    /// sent away (it registers again later).
    mutating func sendAwayWhileUnavailable(routingID: [UInt8], version: UInt8) {
        actions.append(.control(routingID: routingID, version: version, .disconnect))
    }

    // MARK: Helpers

    /// Empties every table (requests, workers, types, results, keys, timers), keeping the statistics, the metrics,
    /// the journal link and the body compaction: the core holds only what the journal gives back.
    private mutating func startAfresh(now: UInt64) {
        var fresh = BrokerCore(validated: configuration, logger: logger, now: now, journaling: journaling)
        fresh.statistics = statistics
        fresh.compactQueuedBody = compactQueuedBody
        swap(&fresh.journalLink, &journalLink)
        self = fresh
    }

    /// The requests and attached duplicates `entries` accept, with what their `unavailable` answer needs.
    static func noteAccepted(
        _ entries: [JournalEntry<Body>], into list: inout [(key: RequestKey, version: UInt8, phase: StaticString)]
    ) {
        for entry in entries {
            switch entry {
            case .accepted(let request, _): list.append((request.key, request.version, request.requested.name))
            case .attached(_, let listener): list.append((listener.key, listener.version, ""))
            default: break
            }
        }
    }
}
