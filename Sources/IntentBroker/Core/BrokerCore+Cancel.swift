import IntentWire

/// Cancellation (section 4.10.2): a client's CANCEL of a request in flight, and the CANCEL the broker sends a
/// version-02 worker for a job whose request is cancelled or reached its hard limit.
extension BrokerCore {
    /// CANCEL from a client: a queued request ends at once with `cancelled`; a running job is cancelled on its
    /// worker, whose RESULT (or the cancel grace period) then ends the request. A request not in flight is answered
    /// as STATUS would be. `identity` is the client's CURVE public key and scope (PROTOCOL.md 3.4; empty without
    /// either): with it, a request the same identity sent from another connection is found too. `version` is the
    /// signature's (the answer while the journal is unavailable uses it).
    mutating func cancel(
        client: [UInt8], requestID: [UInt8], identity: [UInt8] = [], version: UInt8 = 2, now: UInt64
    ) {
        guard !journalLink.isUnavailable else {
            return refuseWhileUnavailable(.cancel(requestID: requestID), client: client, version: version)
        }
        var id = requestIDs[RequestKey(client: client, id: requestID)]
        if id == nil, !identity.isEmpty { id = identityRequestIDs[RequestKey(client: identity, id: requestID)] }
        guard let id, let request = requests[id], isOwnRequest(request, identity: identity) else {
            status(client: client, requestID: requestID, identity: identity, version: 2, now: now)
            return
        }
        if settings.tracing { actions.append(.trace(.event(id, .cancel))) }
        switch request.state {
        case .cancelling, .stoppedCleanly:
            return  // already being cancelled: the ending follows
        case .queued:
            // Not running: queued for its first job, or a lifecycle between phases, or a job waiting again after
            // its worker was lost.
            statistics.cancelledRequests += 1
            fail(id, .cancelled, "cancelled by its client while queued for its \(request.phase) job", now: now)
        case .running(let workerID, let job):
            guard let worker = workers[workerID], worker.version >= 2 else {
                // A CIPW01 worker cannot be told: the request ends now, and the job keeps its slot until answered.
                statistics.cancelledRequests += 1
                fail(
                    id, .cancelled,
                    "cancelled by its client; its worker speaks CIPW01 and cannot stop the \(request.phase) job, "
                        + "whose outcome is unknown", now: now)
                return
            }
            cancelJob(of: request)
            request.state = .cancelling(worker: workerID, job: job)
            setTimer(.cancelGrace, at: now + settings.cancelGrace, for: id)
        }
    }

    /// Sends CANCEL for the request's running job to its worker, if the worker speaks version 02 and was not told
    /// already.
    mutating func cancelJob(of request: BrokerRequest<Body>) {
        guard case .running(let workerID, let job) = request.state,
            let worker = workers[workerID], worker.version >= 2
        else { return }
        statistics.jobsCancelled += 1
        actions.append(.control(routingID: worker.routingID, version: worker.version, .cancel(jobID: job)))
    }
}
