import IntentWire
import Logging

/// Workers: registration, results, drain, departure and lost jobs (sections 5, 6.6, 6.7, 7.1, 8.1).
extension BrokerCore {
    /// Whether `routingID` is a registered worker (the frame checks of section 5.12 depend on it).
    func isRegistered(_ routingID: [UInt8]) -> Bool { workerIDs[ByteKey(routingID)] != nil }

    /// A message that failed the checks of section 5.12: answered with ERROR (in the version of the message's
    /// signature, 1 when it is not one the broker speaks); a registered sender is still alive.
    mutating func workerMessageRejected(
        routingID: [UInt8], _ error: WorkerMessageError, version: UInt8 = 1, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return sendAwayWhileUnavailable(routingID: routingID, version: version)
        }
        statistics.malformedWorkerMessages += 1
        warn(
            .malformedWorkerMessage, peer: routingID, "malformed message from a worker",
            ["code": "\(error.code)", "error": "\(error.message)"], now: now)
        if error.isFromRegisteredWorker, let id = workerIDs[ByteKey(routingID)] { heard(from: id, now: now) }
        // A registered worker gets every message in the version of its READY (section 5.13), even the answer to a
        // message of another version; a READY starts a registration of its own, and STATS is outside any.
        var answerVersion = version
        if error.command != .ready, error.command != .stats, let id = workerIDs[ByteKey(routingID)],
            let registered = workers[id]?.version
        {
            answerVersion = registered
        }
        actions.append(.control(routingID: routingID, version: answerVersion, .error(error.code, error.message)))
    }

    /// A message from a worker that passed the checks. `resultBody` is the body frame of a RESULT; `version` is the
    /// message's signature version (the answer to an unregistered worker uses it).
    mutating func workerMessage(
        _ command: WorkerCommand, from routingID: [UInt8], resultBody: Body?, version: UInt8 = 1,
        identity: [UInt8] = [], now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            let version = if case .ready(let ready) = command { ready.version } else { version }
            return sendAwayWhileUnavailable(routingID: routingID, version: version)
        }
        switch command {
        case .ready(let ready):
            register(ready, routingID: routingID, identity: identity, now: now)
            return
        case .unregistered(let name):
            // Not registered (e.g. the broker restarted, or it was declared dead): tell it to register again.
            if name != .disconnect { actions.append(.control(routingID: routingID, version: version, .disconnect)) }
            if name == .result { statistics.strayResults += 1 }
            return
        default:
            break
        }
        guard let id = workerIDs[ByteKey(routingID)] else { return }  // the decoder answers .unregistered for these
        heard(from: id, now: now)
        switch command {
        case .result(let result):
            if let resultBody { self.result(result, body: resultBody, from: id, now: now) }
        case .drain:
            workers[id]?.draining = true
            // The acknowledgement follows every JOB booked before it on the same connection: once the worker has
            // it, no job is still on its way, and it may leave when the ones it has are answered.
            actions.append(.control(routingID: routingID, version: workers[id]?.version ?? 1, .drainAcknowledged))
            logger.info("worker draining", metadata: ["worker": "\(workers[id]?.name ?? "")"])
        case .disconnect:
            logger.info("worker left", metadata: ["worker": "\(workers[id]?.name ?? "")"])
            removeWorker(id, reason: "disconnected", now: now)
        case .heartbeat, .ready, .unregistered:
            return
        }
    }

    /// Any message from a registered worker proves it alive, and unblocks it (section 7.1).
    private mutating func heard(from id: WorkerID, now: UInt64) {
        guard let blocked = workers[id]?.blocked else { return }
        workers[id]!.expiry = now + settings.workerExpiry
        if blocked {
            workers[id]!.blocked = false
            fill(id, now: now)
        }
    }

    /// Sections 5.16 and 5.18: why the worker's definitions cannot be served beside those of the other registered
    /// workers (nil when they can): only a different definition under a version already served. Another version is
    /// served side by side, compatible or not; requests are pinned to theirs. The registration the same routing id
    /// replaces does not count.
    private func definitionConflict(_ ready: WorkerReady, routingID: [UInt8]) -> (String, Int)? {
        let replaced = workerIDs[ByteKey(routingID)]
        for (index, name) in ready.intentTypes.enumerated() {
            guard let definition = ready.definition(at: index), let type = intentTypeIndex[ByteKey(name)] else {
                continue
            }
            let served = intentTypes[type].definitions.filter { $0.workers.contains { $0 != replaced } }
            guard !served.isEmpty, !served.contains(where: { $0.definition.digest == definition.digest }) else {
                continue
            }
            let display = intentTypes[type].displayName
            if let same = served.first(where: { $0.definition.version == definition.version }) {
                let message =
                    "the definition of \(display) (version \(definition.version), \(definition.shortDigest)) "
                    + "differs from the one served under the same version (\(same.definition.shortDigest), by "
                    + "\(same.workers.compactMap { workers[$0]?.name }.joined(separator: ", "))): give the changed "
                    + "definition a new \"version\" for a rolling upgrade"
                return (message, index)
            }
        }
        return nil
    }

    /// How many refused workers STATS lists (section 5.18).
    static var maxRecentRefusals: Int { 20 }

    /// Remembers a refused READY for STATS `refused` (section 5.18); `intent` is the index of the type it is about.
    private mutating func noteRefusal(_ ready: WorkerReady, intent: Int?, code: WireErrorCode, reason: String) {
        let definition = intent.flatMap { ready.definition(at: $0) }
        recentRefusals.append(
            BrokerStats.Refusal(
                worker: ready.nameString,
                intent: intent.map { String(decoding: ready.intentTypes[$0], as: UTF8.self) } ?? "",
                version: definition?.version ?? 0, digest: definition?.digest ?? "", code: code.rawValue,
                reason: reason))
        if recentRefusals.count > Self.maxRecentRefusals { recentRefusals.removeFirst() }
    }

    private mutating func register(_ ready: WorkerReady, routingID: [UInt8], identity: [UInt8], now: UInt64) {
        if let refused = permissions?.refusal(toServe: ready.intentTypes, key: identity)
            ?? workerNameRefusal(routingID, name: ready.nameString, key: identity)
        {
            forbidden(refused, .serve, peer: routingID, worker: ready.nameString, now: now)
            noteRefusal(ready, intent: nil, code: .forbidden, reason: refused.message)
            actions.append(.control(routingID: routingID, version: ready.version, .error(.forbidden, refused.message)))
            return
        }
        if let (conflict, index) = definitionConflict(ready, routingID: routingID) {
            statistics.definitionRefusals += 1
            noteRefusal(ready, intent: index, code: .definitionMismatch, reason: conflict)
            warn(
                .definitionMismatch, peer: routingID, "worker refused: its intent definition differs",
                ["worker": "\(ready.nameString)", "reason": "\(conflict)"], now: now)
            actions.append(
                .control(routingID: routingID, version: ready.version, .error(.definitionMismatch, conflict)))
            return
        }
        var types: [Int] = []
        for name in ready.intentTypes {
            let type = intern(name)
            if !types.contains(type) { types.append(type) }
        }
        if let previous = workerIDs[ByteKey(routingID)] {
            // The same routing id registering again is a new incarnation (a restarted process taking over the id):
            // whatever the old one was running is lost (section 5.10).
            warn(
                .workerReregistered, peer: routingID, "worker re-registered; its previous jobs are lost",
                ["worker": "\(ready.nameString)"], now: now)
            removeWorker(previous, reason: "re-registered", now: now)
        }
        let id = nextWorkerID
        nextWorkerID &+= 1
        workers[id] = WorkerRecord(
            id: id, routingID: routingID, name: ready.nameString, capacity: ready.capacity, intentTypes: types,
            version: ready.version, expiry: now + settings.workerExpiry, identity: identity)
        workerIDs[ByteKey(routingID)] = id
        for type in types {
            intentTypes[type].workers.append(id)
            intentTypes[type].servedUntil = nil
        }
        for (index, name) in ready.intentTypes.enumerated() {
            guard let definition = ready.definition(at: index), let type = intentTypeIndex[ByteKey(name)] else {
                continue
            }
            workers[id]?.definitionDigests[type] = definition.digest
            remember(definition, type: type)
            if let known = intentTypes[type].definitions.firstIndex(where: {
                $0.definition.digest == definition.digest
            }) {
                intentTypes[type].definitions[known].workers.append(id)
            } else {
                intentTypes[type].definitions.append(ServedDefinition(definition: definition, workers: [id]))
            }
        }
        statistics.workersRegistered += 1
        logger.info(
            "worker registered",
            metadata: [
                "worker": "\(ready.nameString)", "capacity": "\(ready.capacity)", "protocol": "CIPW0\(ready.version)",
                "intents": "\(types.map { intentTypes[$0].displayName })",
            ])
        fill(id, now: now)
    }

    /// The index of an intent type, created on first sight.
    mutating func intern(_ name: [UInt8]) -> Int {
        if let index = intentTypeIndex[ByteKey(name)] { return index }
        let index = intentTypes.count
        intentTypeIndex[ByteKey(name)] = index
        intentTypes.append(IntentTypeState(name: name))
        return index
    }

    /// A RESULT: the request goes on to its next phase (a lifecycle whose job says `continue`) or ends with it.
    private mutating func result(_ result: WorkerResult, body: Body, from workerID: WorkerID, now: UInt64) {
        if !chainedJobs.isEmpty, let chain = chainedJobs[result.jobID], let id = workers[workerID]?.jobs[result.jobID] {
            if chain.continues(after: result.outcome) {
                // A phase of a chained job (section 5.15): the worker goes on to the next one, in the same slot.
                chainedJobs[result.jobID]?.phase = chain.phase.next ?? chain.phase
                phaseContinued(id, result, body: body, on: workerID, now: now)
                return
            }
            chainedJobs.removeValue(forKey: result.jobID)
        }
        guard let id = workers[workerID]?.jobs.removeValue(forKey: result.jobID) else {
            statistics.strayResults += 1
            if let worker = workers[workerID] {
                warn(
                    .strayResult, peer: worker.routingID, "dropped a result for a job this worker was not given",
                    ["worker": "\(worker.name)"], now: now)
            }
            return
        }
        defer { fill(workerID, now: now) }
        guard let request = requests[id], request.runs(job: result.jobID, on: workerID) else {
            // Already ended (timeout); the slot is free again, and a keyed attempt no longer runs.
            if let scope = unknownAttempts.removeValue(forKey: result.jobID) {
                idempotency.attemptFinished(scope, on: workerID)
            }
            return
        }
        request.bodySize = result.bodySize
        intentTypes[request.intentType].pace.recordAnswer()
        recordPhaseEnded(request, result, on: workerID, now: now)
        if request.conversation != nil { recordPhase(request, result, output: body, worker: workerID, now: now) }
        if request.isCancelling {
            // Cancelled while the job ran (section 4.10.2): the handler stopped, or finished first; a lifecycle goes
            // no further.
            if result.outcome == .cancelled { request.state = .stoppedCleanly }
            if result.outcome == .continue {
                fail(id, .cancelled, "cancelled by its client after its \(request.phase) phase", now: now)
            } else {
                end(
                    id, status: Self.replyStatus(result.outcome), payload: .body(body),
                    outcome: Self.metricsOutcome(result.outcome), now: now)
            }
            return
        }
        if result.outcome == .continue, request.requested == .lifecycle, let next = request.phase.next,
            !(next == .handle && request.stopsAtReadyConfirm)
        {
            request.phase = next
            request.body = body
            dispatch(id, atFront: false, now: now)
        } else {
            end(
                id, status: Self.replyStatus(result.outcome), payload: .body(body),
                outcome: Self.metricsOutcome(result.outcome), now: now)
        }
    }

    /// A `continue` RESULT of a chained job before its last phase: the request is in its next phase, still running
    /// on the same worker with the same job. A request that ended meanwhile (hard limit, cancel) leaves the job as
    /// it is, booked until the worker's last RESULT for it.
    private mutating func phaseContinued(
        _ id: RequestID, _ result: WorkerResult, body: Body, on workerID: WorkerID, now: UInt64
    ) {
        guard let request = requests[id], request.runs(job: result.jobID, on: workerID),
            let next = request.phase.next
        else { return }
        request.bodySize = result.bodySize
        recordPhaseEnded(request, result, on: workerID, now: now)
        if request.conversation != nil { recordPhase(request, result, output: body, worker: workerID, now: now) }
        if request.isCancelling {
            // The worker was told to stop: it runs no further phase, and answers the next with `cancelled`.
            fail(id, .cancelled, "cancelled by its client after its \(request.phase) phase", now: now)
            return
        }
        statistics.chainedPhases += 1
        request.phase = next
        request.body = body
        request.bookedAt = now
    }

    /// The metrics of a phase a RESULT answered: its worker, intent type, phase, outcome and time since booked.
    private func recordPhaseEnded(
        _ request: BrokerRequest<Body>, _ result: WorkerResult, on workerID: WorkerID, now: UInt64
    ) {
        guard let metrics, let worker = workers[workerID] else { return }
        metrics.jobEnded(
            worker: worker.name, intent: metricsLabel(ofType: request.intentType),
            phase: request.phase.name.description, outcome: result.outcome.rawValue,
            nanoseconds: now &- request.bookedAt)
    }

    /// Removes a worker; its unanswered jobs are dispatched again (resolve, confirm) or end with `worker-lost`
    /// (handle), section 6.7.
    mutating func removeWorker(_ id: WorkerID, reason: String, now: UInt64) {
        guard let worker = workers.removeValue(forKey: id) else { return }
        if workerIDs[ByteKey(worker.routingID)] == id { workerIDs.removeValue(forKey: ByteKey(worker.routingID)) }
        for type in worker.definitionDigests.keys {
            for index in intentTypes[type].definitions.indices {
                intentTypes[type].definitions[index].workers.removeAll { $0 == id }
            }
            intentTypes[type].definitions.removeAll { $0.workers.isEmpty }
        }
        for type in worker.intentTypes {
            intentTypes[type].workers.removeAll { $0 == id }
            if intentTypes[type].workers.isEmpty { intentTypes[type].servedUntil = now &+ settings.workerGrace }
        }
        if reason != "disconnected" || !worker.jobs.isEmpty {
            statistics.workersLost += 1
            metrics?.workerLost()
        }
        if !unknownAttempts.isEmpty {
            for job in worker.jobs.keys { unknownAttempts.removeValue(forKey: job.value) }
        }
        if !chainedJobs.isEmpty {
            for job in worker.jobs.keys { chainedJobs.removeValue(forKey: job) }
        }
        idempotency.workerGone(id)
        let lost = worker.jobs.compactMap { job, request -> BrokerRequest<Body>? in
            guard let pending = requests[request], pending.runs(job: job.value, on: id) else {
                return nil
            }
            return pending
        }.sorted { $0.id < $1.id }
        if !lost.isEmpty {
            logger.warning(
                "worker lost with jobs",
                metadata: ["worker": "\(worker.name)", "reason": "\(reason)", "jobs": "\(lost.count)"])
        }
        // Oldest last to the front, so the oldest ends up first in its queue.
        if let metrics {
            for request in lost {
                metrics.jobEnded(
                    worker: worker.name, intent: metricsLabel(ofType: request.intentType),
                    phase: request.phase.name.description, outcome: "lost", nanoseconds: nil)
            }
        }
        // A job chained through handle may have started it before the broker heard (section 5.15): not run again.
        // A worker that said DISCONNECT left on its own: its jobs are not suspects.
        let counts = reason != "disconnected"
        for request in lost.reversed() where request.phase.isRetriable && !request.handleSent {
            if counts { request.crashes += 1 }
            if request.crashes > configuration.maxCrashRetries {
                statistics.requestsQuarantined += 1
                metrics?.requestQuarantined()
                logger.warning(
                    "request quarantined: its workers were lost while running it",
                    metadata: [
                        "request": "\(request.id)", "intent": "\(intentTypes[request.intentType].displayName)",
                        "phase": "\(request.phase)", "crashes": "\(request.crashes)",
                    ])
                fail(
                    request.id, .workerCrashed,
                    "\(request.crashes) workers were lost (crashed or froze) while running this request's "
                        + "\(request.phase) job; the request itself is suspect and is not run again",
                    now: now)
                continue
            }
            statistics.jobsRedispatched += 1
            metrics?.jobRedispatched()
            dispatch(request.id, atFront: true, now: now)
        }
        for request in lost where !request.phase.isRetriable || request.handleSent {
            fail(
                request.id, .workerLost,
                request.phase == .handle
                    ? "the worker running this handle job was lost; it is not run again"
                    : "the worker running this lifecycle through handle was lost in its \(request.phase) phase; "
                        + "it may have started handle, so it is not run again",
                now: now)
        }
    }

    /// The status of the reply a RESULT ends a request with: `error` for outcomes `error` and `cancelled`.
    static func replyStatus(_ outcome: JobOutcome) -> ClientReply<Body>.Status {
        outcome == .error || outcome == .cancelled ? .error : .final
    }
}
