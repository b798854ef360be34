import IntentWire
import Logging

/// Time: deadlines and the hard limit (section 6.3), heartbeats and silent workers (7.1), unserved types (6.6),
/// result expiry (6.4) and shutdown (8.2).
extension BrokerCore {
    mutating func setTimer(_ kind: BrokerTimer.Kind, at time: UInt64, for request: RequestID) {
        timers.insert(BrokerTimer(time: time, sequence: nextTimerSequence, kind: kind, request: request))
        nextTimerSequence &+= 1
    }

    /// Does whatever has fallen due by `now`: timers, the pace update, heartbeats (and expiry of silent workers,
    /// results and unserved queues).
    mutating func tick(now: UInt64) {
        fireDueTimers(now: now)
        if now >= nextPaceUpdate { updatePace(now: now) }
        if now >= nextHeartbeat {
            heartbeat(now: now)
            nextHeartbeat = now + settings.heartbeat
        }
        if now >= nextBindingSweep, !clientBindings.isEmpty { sweepClientBindings(now: now) }
    }

    /// Fires the timers due by `now`, in order (the shell also calls this between batches of a long drain, so a
    /// flood of messages never delays a deadline reply).
    mutating func fireDueTimers(now: UInt64) {
        while let timer = timers.popMin(dueBy: now) { fire(timer, now: now) }
    }

    private mutating func fire(_ timer: BrokerTimer, now: UInt64) {
        guard let request = requests[timer.request] else { return }  // ended meanwhile
        switch timer.kind {
        case .deadline:
            guard request.started else {
                // Never started before its deadline: shed it now rather than keep the caller waiting in a queue
                // that does not move fast enough (rule 2).
                statistics.shedRequests += 1
                fail(request.id, .busy, "no worker could start the request before its deadline", now: now)
                return
            }
            if !request.firstReplySent {
                request.firstReplySent = true
                sendProgress(request, to: request.key, version: request.version, now: now)
            }
            // The hard limit is acted on a margin early too, so that every request ends within it (rule 5).
            setTimer(
                .hardLimit, at: request.arrival + settings.hardLimit - replyMargin(settings.hardLimit), for: request.id)
        case .hardLimit:
            // The job, if one runs, is cancelled on its worker too (section 4.10.2); it keeps its slot until answered.
            cancelJob(of: request)
            fail(request.id, .timeout, "the request did not finish within the hard limit", now: now)
        case .listenerDeadline:
            listenerDeadlines(request, now: now)
        case .cancelGrace:
            guard request.isCancelling else { return }
            statistics.cancelledRequests += 1
            fail(
                request.id, .cancelled,
                "cancelled by its client; its worker did not answer within the cancel grace period, so the "
                    + "\(request.phase) job's outcome is unknown", now: now)
        }
    }

    private mutating func updatePace(now: UInt64) {
        for type in intentTypes.indices where intentTypes[type].pace.saturatedSince != nil {
            let stillSaturated = !intentTypes[type].queue.isEmpty || !anyWorkerHasRoom(for: type)
            intentTypes[type].pace.update(now: now, stillSaturated: stillSaturated)
            let pace = intentTypes[type].pace.jobsPerSecond
            if pace > 0 {
                let slots = intentTypes[type].workers.reduce(0) { $0 + (workers[$1]?.capacity ?? 0) }
                intentTypes[type].turnoverNanos = UInt64(min(Double(slots) / pace * 1e9, 3.6e12))
            }
        }
        nextPaceUpdate = now + Self.paceWindow
    }

    /// Heartbeats every worker, removes the silent ones, drops expired results, and ends the queued requests of
    /// types whose grace period ran out.
    mutating func heartbeat(now: UInt64) {
        for worker in workers.values.sorted(by: { $0.id < $1.id }) {
            let id = worker.id
            if worker.expiry < now {
                logger.warning("worker expired (silent)", metadata: ["worker": "\(worker.name)"])
                removeWorker(id, reason: "expired", now: now)
            } else {
                actions.append(.control(routingID: worker.routingID, version: worker.version, .heartbeat))
            }
        }
        results.expire(now: now)
        if journaling, now > results.ttl { journal.append(.resultsExpired(before: now - results.ttl)) }
        idempotency.expire(now: now)
        expireConversations(now: now)
        for type in intentTypes.indices
        where !intentTypes[type].queue.isEmpty && !intentTypes[type].isServed(now: now) {
            let name = intentTypes[type].displayName
            for id in intentTypes[type].queue.waiting {  // each leaves its queue as it ends
                fail(id, .unknownIntent, "no worker serves intent type \"\(name)\" any more", now: now)
            }
        }
    }

    // MARK: Shutdown

    /// Graceful shutdown begins: new requests are refused; accepted ones get the grace period (section 8.2).
    mutating func beginShutdown(now: UInt64) {
        guard shutdownDeadline == nil else { return }
        shutdownDeadline = now + configuration.shutdownGracePeriod.nanoseconds
        logger.info("broker shutting down", metadata: ["in-flight": "\(requests.count)"])
    }

    /// Whether the loop may stop: shutting down, and nothing in flight or the grace period over.
    func isDone(now: UInt64) -> Bool {
        guard let shutdownDeadline else { return false }
        return requests.isEmpty || now >= shutdownDeadline
    }

    /// Ends every request still in flight with `shutting-down` (oldest first) and tells every worker to go.
    mutating func finishShutdown(now: UInt64) {
        if shutdownDeadline == nil { shutdownDeadline = now }
        for request in requests.values.sorted(by: { $0.id < $1.id }) {
            fail(request.id, .shuttingDown, "the broker is shutting down", now: now)
        }
        for worker in workers.values.sorted(by: { $0.id < $1.id }) {
            actions.append(.control(routingID: worker.routingID, version: worker.version, .disconnect))
        }
    }

    /// The duplicates attached to `request` whose deadline has come: a progress reply each, or `busy` for those the
    /// operation has not started for by then (they leave it; rule 2 of section 6.3).
    private mutating func listenerDeadlines(_ request: BrokerRequest<Body>, now: UInt64) {
        var listeners = request.listeners
        var shed: [Listener] = []
        listeners.removeAll { listener in
            guard !listener.progressSent, listener.actAt <= now, !request.started else { return false }
            shed.append(listener)
            return true
        }
        for index in listeners.indices where !listeners[index].progressSent && listeners[index].actAt <= now {
            listeners[index].progressSent = true
            sendProgress(
                request, to: listeners[index].key, version: listeners[index].version, since: listeners[index].arrival,
                now: now)
        }
        requests[request.id]?.listeners = listeners
        for listener in shed {
            if !request.identity.isEmpty {
                let byIdentity = RequestKey(client: request.identity, id: listener.key.id)
                if identityRequestIDs[byIdentity] == request.id { identityRequestIDs.removeValue(forKey: byIdentity) }
            }
            statistics.shedRequests += 1
            metrics?.requestEnded(
                intent: metricsLabel(ofType: request.intentType), phase: request.phase.name.description,
                outcome: WireErrorCode.busy.rawValue, finalNanoseconds: nil, firstReply: false)
            let busy = WireBody.error(.busy, "no worker could start the request before its deadline")
            let result = ResultStore<Body>.Result(isError: true, phase: request.phase.name, payload: .bytes(busy))
            sendEnding(result, status: .error, to: listener.key, version: listener.version, now: now)
            if journaling {
                journal.append(.detached(request.id, listener))
                journal.append(.stored(result, key: listener.key, version: listener.version, at: now))
            }
        }
    }

    /// The one `progress` reply of a request (or of a duplicate attached to it), rule 3.
    mutating func sendProgress(
        _ request: BrokerRequest<Body>, to key: RequestKey, version: UInt8, since: UInt64? = nil, now: UInt64
    ) {
        statistics.progressReplies += 1
        if settings.tracing { actions.append(.trace(.event(request.id, .progress))) }
        // The request's own first reply is timed; an attached duplicate's arrival is not kept.
        metrics?.progressSent(afterNanoseconds: key == request.key ? now &- request.arrival : nil)
        actions.append(
            .reply(
                ClientReply(
                    client: key.client, command: .reply, requestID: key.id, status: .progress,
                    phase: request.phase.name, payload: .bytes(progressBody(request, now: now, since: since)),
                    version: version)))
    }
}
