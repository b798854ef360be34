import IntentWire
import Logging

/// Load balancing and queueing (section 6.5): which worker gets a job, and when queued jobs start.
extension BrokerCore {
    /// Whether a worker of `type` could take a job now (no side effects: the round-robin cursor stays put).
    func anyWorkerHasRoom(for type: Int) -> Bool {
        intentTypes[type].workers.contains { workers[$0]?.hasRoom == true }
    }

    /// The least-loaded worker of `type` with room that may run a job pinned to `pin` (section 5.18); ties go
    /// round-robin so idle workers share the work.
    mutating func pickWorker(for type: Int, pin: DefinitionPin? = nil) -> WorkerID? {
        let candidates = intentTypes[type].workers
        let count = candidates.count
        guard count > 0 else { return nil }
        let checksPin = pinMatters(pin, type: type)
        let start = intentTypes[type].cursor % count
        var best = -1
        var bestLoad = Int.max
        for offset in 0..<count {
            let index = (start + offset) % count
            guard let worker = workers[candidates[index]], worker.hasRoom else { continue }
            if checksPin, !canServe(candidates[index], type: type, pin: pin) { continue }
            if worker.load < bestLoad {
                best = index
                bestLoad = worker.load
                if bestLoad == 0 { break }
            }
        }
        guard best >= 0 else { return nil }
        intentTypes[type].cursor = best + 1
        return candidates[best]
    }

    /// Gives the request's current job to a worker with room, or queues it (at the front for a job that lost its
    /// worker, section 6.5).
    mutating func dispatch(_ id: RequestID, atFront: Bool, now: UInt64) {
        guard let request = requests[id] else { return }
        let type = request.intentType
        if request.isCancelling {
            // Its cancelled job came back unanswered (its worker was lost, or the job never went out): it ends here.
            statistics.cancelledRequests += 1
            fail(id, .cancelled, "cancelled by its client before its \(request.phase) job was answered", now: now)
            return
        }
        if let worker = pickWorker(for: type, pin: request.pin) {
            book(id, on: worker, now: now)
        } else {
            enqueue(id, atFront: atFront, now: now)
        }
    }

    /// Books the request's current job on `worker` and queues its JOB; the shell sends the batch's JOBs in one burst
    /// (a wake-up of libzmq's I/O thread and a TCP write for many jobs, not for each).
    private mutating func book(_ id: RequestID, on workerID: WorkerID, now: UInt64) {
        // One hash lookup per table; the worker's job table is changed in place through the index (no copy of it).
        guard let request = requests[id], let workerSlot = workers.index(forKey: workerID) else { return }
        let jobID = nextJobID
        nextJobID &+= 1
        request.state = .running(worker: workerID, job: jobID)
        request.started = true
        request.bookedAt = now
        if request.phase == .handle {
            // Recorded before the JOB leaves (the shell commits a batch's journal before its actions).
            if journaling && !request.handleSent { journal.append(.handleDispatched(id)) }
            request.handleSent = true
        }
        workers.values[workerSlot].jobs[jobID] = id
        // A suspect runs alone: its worker takes no other job until it is answered (section 6.7).
        if request.crashes > 0 { workers.values[workerSlot].isolatedJob = jobID }
        statistics.jobsDispatched += 1
        let type = request.intentType
        var job = JobDispatch(
            worker: workerID, routingID: workers.values[workerSlot].routingID, jobID: jobID, request: id,
            intentType: intentTypes[type].name, phase: request.phase, deadline: request.deadline, body: request.body)
        job.version = workers.values[workerSlot].version
        if job.version >= 5 { job.traceContext = request.traceContext }
        if request.phase == .handle, let scope = request.idempotency {
            job.idempotencyKey = scope.key
            job.attempt = request.attempt
        }
        if job.version >= 3, request.requested == .lifecycle {
            let last = chainEnd(of: request)
            if last.order > request.phase.order {
                job.chainedThrough = last
                chainedJobs[jobID] = ChainedJob(phase: request.phase, lastPhase: last)
                // The worker may start handle before the broker hears of it (section 5.15).
                if last == .handle { request.handleSent = true }
            }
        }
        actions.append(.sendJob(job))
        if !workers.values[workerSlot].hasRoom, intentTypes[type].pace.saturatedSince == nil,
            !anyWorkerHasRoom(for: type)
        {
            intentTypes[type].pace.markSaturated(now: now)
        }
    }

    /// The last phase a lifecycle's job may run on one worker (section 5.15): ``BrokerConfiguration/lifecycleChainEnd``,
    /// except that handle runs as a job of its own for a keyed request (its attempt is counted when its handle job
    /// goes out) and on a broker with a journal (its dispatch is recorded before the JOB leaves).
    func chainEnd(of request: BrokerRequest<Body>) -> RequestPhase {
        let end = configuration.lifecycleChainEnd
        if end == .handle, journaling || request.idempotency != nil || request.conversation != nil { return .confirm }
        return end
    }

    /// Gives `worker` queued jobs of its intent types while it has room, each time the job of the oldest request at
    /// the head of those queues (or, while a type serves several definitions, the first waiting request the worker
    /// may run: section 5.18).
    mutating func fill(_ workerID: WorkerID, now: UInt64) {
        guard let types = workers[workerID]?.intentTypes else { return }
        var exhausted: [Int] = []
        // No copy of the worker is held across book(), which changes its job table in place.
        while workers[workerID]?.hasRoom == true {
            var bestType = -1
            var bestArrival = UInt64.max
            for type in types where !exhausted.contains(type) {
                if let arrival = intentTypes[type].queue.headArrival(), arrival < bestArrival {
                    bestType = type
                    bestArrival = arrival
                }
            }
            guard bestType >= 0 else { return }
            guard let id = dequeue(bestType, for: workerID) else {
                exhausted.append(bestType)  // nothing waiting there that this worker's definition may run
                continue
            }
            book(id, on: workerID, now: now)
        }
    }

    /// Asked by the shell just before it sends a booked JOB: whether the job is still the request's current one.
    /// A job whose request ended before it went out (the hard limit) never reaches the worker, so its slot is freed.
    mutating func shouldSend(_ job: JobDispatch<Body>, now: UInt64) -> Bool {
        if let request = requests[job.request], request.runs(job: job.jobID, on: job.worker) {
            return true
        }
        if workers[job.worker]?.jobs.removeValue(forKey: job.jobID) != nil {
            chainedJobs.removeValue(forKey: job.jobID)
            statistics.jobsDispatched -= 1
            fill(job.worker, now: now)
        }
        return false
    }

    /// The worker's send queue was full (`EAGAIN`): it is blocked until heard from, and the job, never delivered,
    /// goes to another worker or to the front of the queue.
    mutating func jobNotSentWorkerBlocked(_ job: JobDispatch<Body>, now: UInt64) {
        workers[job.worker]?.blocked = true
        unbook(job, now: now)
    }

    /// The worker is gone (`EHOSTUNREACH`): its jobs booked and not sent (`unsent`, this one included) go elsewhere
    /// like never-run jobs, then the worker is removed (its jobs really sent are lost, section 6.7).
    mutating func workerUnreachable(_ workerID: WorkerID, unsent: [JobDispatch<Body>], now: UInt64) {
        var requeue: [RequestID] = []
        for job in unsent where job.worker == workerID {
            guard workers[workerID]?.jobs.removeValue(forKey: job.jobID) != nil else { continue }
            chainedJobs.removeValue(forKey: job.jobID)
            statistics.jobsDispatched -= 1
            guard requests[job.request]?.runs(job: job.jobID, on: workerID) == true else { continue }
            if job.lastPhase == .handle { requests[job.request]?.handleSent = false }  // it never went out
            requeue.append(job.request)
        }
        if let worker = workers[workerID] {
            warn(
                .workerUnreachable, peer: worker.routingID, "worker unreachable", ["worker": "\(worker.name)"], now: now
            )
        }
        removeWorker(workerID, reason: "unreachable", now: now)
        for id in requeue { dispatch(id, atFront: true, now: now) }
    }

    private mutating func unbook(_ job: JobDispatch<Body>, now: UInt64) {
        guard workers[job.worker]?.jobs.removeValue(forKey: job.jobID) != nil else { return }
        chainedJobs.removeValue(forKey: job.jobID)
        statistics.jobsDispatched -= 1
        guard requests[job.request]?.runs(job: job.jobID, on: job.worker) == true else { return }
        if job.lastPhase == .handle { requests[job.request]?.handleSent = false }  // it never went out
        dispatch(job.request, atFront: true, now: now)
    }
}
