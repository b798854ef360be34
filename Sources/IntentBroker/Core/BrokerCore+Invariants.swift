import IntentWire

/// The core's invariants, checked by the tests after every step (cheap enough for tests, never called by the
/// broker itself).
extension BrokerCore {
    /// Every broken invariant, described; empty when the state is consistent.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        // The journal link: only a commit in flight holds actions back, and only it (or the failure it ended in)
        // has requests whose acceptance is not yet recorded; a core that cannot record holds nothing.
        if !journalLink.isCommitting && !journalLink.awaiting.isEmpty {
            problems.append("actions wait for a commit, but none is in flight")
        }
        if !journalLink.isCommitting && !journalLink.hasFailed && !journalLink.submitted.isEmpty {
            problems.append("requests wait for a commit, but none is in flight")
        }
        if journalLink.isUnavailable || journalLink.isStandingBy {
            if !requests.isEmpty || !workers.isEmpty || timers.count > 0 {
                problems.append("the journal cannot be reached, yet the core holds requests, workers or timers")
            }
            if !journal.isEmpty { problems.append("journal entries kept while nothing can be recorded") }
        }
        if !journaling && journalLink.state != .none { problems.append("a journal link without a journal") }
        // Queues own their counts: each type's count is the number of its requests in the queued state, and the
        // total is their sum.
        var queuedByType = [Int](repeating: 0, count: intentTypes.count)
        for request in requests.values where request.isQueued { queuedByType[request.intentType] += 1 }
        for (type, state) in intentTypes.enumerated() {
            if state.queue.count != queuedByType[type] {
                problems.append(
                    "type \(state.displayName): queue count \(state.queue.count), queued requests \(queuedByType[type])"
                )
            }
            if state.queue.storedEntries < state.queue.count {
                problems.append("type \(state.displayName): fewer entries than its count")
            }
            for problem in state.queue.consistencyProblems() {
                problems.append("type \(state.displayName): \(problem)")
            }
            let waiting = state.queue.waiting
            if Set(waiting).count != waiting.count {
                problems.append("type \(state.displayName): a request queued twice")
            }
            for id in waiting where requests[id]?.isQueued != true {
                problems.append("type \(state.displayName): queue holds request \(id) that is not queued")
            }
        }
        if queuedCount != queuedByType.reduce(0, +) {
            problems.append("queued count \(queuedCount), queued requests \(queuedByType.reduce(0, +))")
        }
        // No worker holds more than its capacity; every running request is on a registered worker that holds it.
        for worker in workers.values where worker.jobs.count > worker.capacity {
            problems.append("worker \(worker.name) holds \(worker.jobs.count) jobs, capacity \(worker.capacity)")
        }
        for request in requests.values {
            if case let (worker, job)? = request.job, workers[worker]?.jobs[job] != request.id {
                problems.append("request \(request.id) runs as job \(job) on worker \(worker), which does not hold it")
            }
            if requestIDs[request.key] != request.id { problems.append("request \(request.id) not found by its key") }
            for listener in request.listeners where requestIDs[listener.key] != request.id {
                problems.append("a duplicate attached to request \(request.id) is not found by its key")
            }
            if let scope = request.idempotency,
                case .inFlight(let holder)? = idempotency.records[scope]?.state, holder != request.id
            {
                problems.append("request \(request.id) runs a key whose record names request \(holder)")
            }
        }
        // A key in flight is run by a request in flight (a duplicate attaches to it).
        for (scope, record) in idempotency.records {
            if case .inFlight(let id) = record.state, requests[id]?.idempotency != scope {
                problems.append("a key's record names request \(id) in flight, which does not run it")
            }
        }
        // An attempt whose outcome is unknown is remembered only while its job is still on a live worker, and no
        // later attempt of its key is in flight meanwhile.
        var stillRunning = Set<IdempotencyScope>()
        for (job, scope) in unknownAttempts {
            if workers.values.contains(where: { $0.jobs[job] != nil }) {
                stillRunning.insert(scope)
            } else {
                problems.append("job \(job) of an unknown attempt is on no worker but still remembered")
            }
        }
        for request in requests.values {
            if let scope = request.idempotency, stillRunning.contains(scope) {
                problems.append("request \(request.id) runs a key whose earlier attempt may still be running")
            }
        }
        let keys = requests.values.reduce(0) { $0 + 1 + $1.listeners.count }
        if requestIDs.count != keys {
            problems.append("\(requestIDs.count) keys for \(requests.count) requests and their duplicates")
        }
        // A request being cancelled runs on a version-02 worker and will end by the cancel grace period at the
        // latest; the CURVE index names only requests in flight.
        for request in requests.values where request.isCancelling {
            guard let worker = request.worker, workers[worker].map({ $0.version >= 2 }) == true else {
                problems.append("request \(request.id) is being cancelled but runs on no version-02 or 03 worker")
                continue
            }
            if !timers.unordered.contains(where: { $0.request == request.id && $0.kind == .cancelGrace }) {
                problems.append("request \(request.id) is being cancelled without a cancel grace timer")
            }
        }
        for (key, id) in identityRequestIDs where requests[id] == nil {
            problems.append("the CURVE index maps \(key.id) to request \(id), which has ended")
        }
        // A chained job (section 5.15) is booked on a version-03 worker, its phase is not past its last one, and a
        // request running it is in that phase (a chain through handle counts as a handle dispatch).
        for (job, chain) in chainedJobs {
            guard let worker = workers.values.first(where: { $0.jobs[job] != nil }), worker.version >= 3 else {
                problems.append("chained job \(job.value) is on no version-03 worker")
                continue
            }
            if chain.phase.order > chain.lastPhase.order {
                problems.append("chained job \(job.value) is past its last phase")
            }
            if let id = worker.jobs[job], let request = requests[id],
                request.runs(job: job.value, on: worker.id)
            {
                if request.phase != chain.phase {
                    problems.append("request \(id) is in phase \(request.phase), its chained job in \(chain.phase)")
                }
                if chain.lastPhase == .handle, !request.handleSent {
                    problems.append("request \(id) is chained through handle but not marked as dispatched to handle")
                }
            }
        }
        // Workers are indexed by routing id, and each serves the types that list it.
        for worker in workers.values {
            if workerIDs[ByteKey(worker.routingID)] != worker.id {
                problems.append("worker \(worker.name) not indexed")
            }
            for type in worker.intentTypes where !intentTypes[type].workers.contains(worker.id) {
                problems.append("worker \(worker.name) missing from type \(intentTypes[type].displayName)")
            }
        }
        for state in intentTypes {
            for id in state.workers where workers[id] == nil {
                problems.append("type \(state.displayName) lists worker \(id), which is gone")
            }
        }
        // Every request has a timer that will end it or send its progress.
        let timed = Set(timers.unordered.map(\.request))
        for id in requests.keys.map(\.value) where !timed.contains(id) { problems.append("request \(id) has no timer") }
        // A conversation runs a turn if and only if its turn's request is in flight and linked to it; the store's
        // cost is the sum of its conversations'.
        for (key, conversation) in conversations.conversations {
            if conversation.state == .running {
                guard let running = conversation.running, requests[running.request]?.conversation == key else {
                    problems.append("conversation \(key.name) runs a turn whose request is not in flight")
                    continue
                }
            } else if conversation.running != nil {
                problems.append("conversation \(key.name) is \(conversation.state.rawValue) but names a running turn")
            }
        }
        for request in requests.values {
            if let key = request.conversation, conversations[key] == nil {
                problems.append("request \(request.id) is the turn of a conversation that is gone")
            }
        }
        if conversations.bytes != conversations.conversations.values.reduce(0, { $0 + $1.cost }) {
            problems.append("the conversations' cost is not the sum of theirs")
        }
        return problems
    }
}
