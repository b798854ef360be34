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
            case .stats(let body):
                try backend.send(CIP.Worker.stats, more: true)
                try backend.send(body)
            }
        } catch {}
    }
}
