import IntentWire
import Logging
import ZeroMQ

/// Actions out: the frames the core asked for, laid out on the sockets.
extension BrokerLoop {
    /// Performs ``performing`` in order; performing one may queue more in the core (a JOB that cannot be sent is
    /// dispatched elsewhere), which the caller performs next.
    ///
    /// Each action is moved out of the batch, not copied (a copy of a JOB retains and releases each of its arrays and
    /// its body): swapped with a placeholder that owns nothing, and the placeholders are dropped at the end.
    func perform() {
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
            case .transcript(let line): transcripts?.write(line)
            case .trace(let event): spans?.handle(event)
            }
        }
        performing.removeAll(keepingCapacity: true)
    }

    /// What ``perform()`` leaves in the batch in place of an action it took: an empty array and a number.
    private static var placeholder: BrokerAction<ZMQMessage> { .pong(client: [], version: 0) }

    // The frames are laid out by IntentWire's encoders, written straight into the socket (``WireSink``): no frame
    // is built here, and a body moves as the libzmq message it arrived in.

    private func sendJob(_ job: JobDispatch<ZMQMessage>) {
        let now = MonotonicTime.now()
        guard core.shouldSend(job, now: now) else { return }
        guard var backend = sockets?.backend else { return }
        var traceContext = job.traceContext
        if let spans { traceContext = spans.jobSent(job, workerName: core.workers[job.worker]?.name ?? "") }
        do {
            let sent = try BrokerMessageEncoder.job(
                into: &backend, to: job.routingID, version: job.version, jobID: WireWord(job.jobID),
                intentType: job.intentType, phase: job.phase,
                timeLeftMilliseconds: job.deadline > now ? (job.deadline - now) / 1_000_000 : 0, body: .body(job.body),
                idempotencyKey: job.idempotencyKey, attempt: job.attempt, lastPhase: job.lastPhase,
                traceContext: traceContext)
            if !sent { core.jobNotSentWorkerBlocked(job, now: now) }
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
        guard var frontend = sockets?.frontend else { return }
        do {
            let sent = try BrokerReplyEncoder.reply(
                into: &frontend, to: reply.client, version: reply.version, kind: reply.command.kind,
                requestID: reply.requestID, status: reply.status, phase: reply.phase, body: reply.payload,
                isReplay: reply.isReplay)
            if !sent { core.replyNotDelivered() }
        } catch {
            core.replyNotDelivered()
        }
    }

    private func sendPong(_ client: [UInt8], version: UInt8) {
        guard var frontend = sockets?.frontend else { return }
        do {
            if try !BrokerReplyEncoder.pong(into: &frontend, to: client, version: version) { core.replyNotDelivered() }
        } catch {
            core.replyNotDelivered()
        }
    }

    private func sendControl(_ control: WorkerControl, to routingID: [UInt8], version: UInt8) {
        guard var backend = sockets?.backend else { return }
        do {
            switch control {
            case .heartbeat: try BrokerMessageEncoder.heartbeat(into: &backend, to: routingID, version: version)
            case .drainAcknowledged: try BrokerMessageEncoder.drain(into: &backend, to: routingID, version: version)
            case .disconnect: try BrokerMessageEncoder.disconnect(into: &backend, to: routingID, version: version)
            case .error(let code, let message):
                try BrokerMessageEncoder.error(
                    into: &backend, to: routingID, version: version, code: code, message: message)
            case .cancel(let jobID):
                try BrokerMessageEncoder.cancel(into: &backend, to: routingID, version: version, jobID: WireWord(jobID))
            case .stats(let body):
                try BrokerMessageEncoder.stats(into: &backend, to: routingID, version: version, body: .bytes(body))
            }
        } catch {}
    }
}
