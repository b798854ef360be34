import ConciergeJSON

/// Decodes the messages a worker receives from the broker, checking their frames in the order of
/// `Schemas/PROTOCOL.md` section 5.12 (worker side, checks W1-W7).
///
/// Pure: no sockets, no clocks, no shared state. A JOB that passes comes out as a ``WorkerJob``; what the worker
/// then checks (does it serve the intent type, is the body a valid Interaction) is section 5.11.
public struct BrokerMessageDecoder: Sendable {
    /// A decoder.
    public init() {}

    /// Decodes one message from the broker.
    /// - Throws: ``BrokerMessageError`` for the first failed check; it carries the job id when the worker should
    ///   answer it.
    public func decode(_ frames: WireFrames) throws(BrokerMessageError) -> BrokerCommand {
        let count = frames.views.count
        // W1: at least 2 frames, F0 the signature (CIPW01 to CIPW06, section 5.1).
        guard count >= 2, let version = WorkerMessageDecoder.version(ofSignature: frames[0]) else {
            throw BrokerMessageError(message: "not a CIPW01 to CIPW06 message", check: 1)
        }
        // W2: the command.
        let command = frames[1]
        if CIP.Worker.job.matches(command) { return .job(try decodeJob(frames, version: version)) }
        if version >= 2, CIP.Worker.cancel.matches(command) {
            guard count == CIP.Frames.cancel, frames[2].count == CIP.jobIDLength else {
                throw BrokerMessageError(
                    message:
                        "CANCEL takes 3 frames: \(CIP.workerSignature(version: version)), CANCEL, job id (8 bytes)",
                    check: 3)
            }
            return .cancel(jobID: Array(frames[2]))
        }
        if CIP.Worker.heartbeat.matches(command) { return .heartbeat }
        if CIP.Worker.drain.matches(command) { return .drain }
        if CIP.Worker.disconnect.matches(command) { return .disconnect }
        if CIP.Worker.error.matches(command) {
            return .error(
                code: count > 2 ? WireText.display(frames[2]) : "",
                message: count > 3 ? WireText.display(frames[3], limit: 4096) : ""
            )
        }
        throw BrokerMessageError(message: "unknown command \"\(WireText.display(command))\"", check: 2)
    }

    /// Decodes one message given as byte arrays (tests, fuzz targets, cold paths).
    public func decode(_ frames: [[UInt8]]) throws(BrokerMessageError) -> BrokerCommand {
        try WireFrames.withFrames(frames) { frames in
            Result { () throws(BrokerMessageError) in try decode(frames) }
        }.get()
    }

    /// W3-W7: a JOB.
    private func decodeJob(_ frames: WireFrames, version: UInt8) throws(BrokerMessageError) -> WorkerJob {
        let count = frames.count
        if version >= 6 {
            // Section 5.17: `[CIPW06, JOB, header, body]`; the job id is the header's first 8 bytes.
            guard count == CIP.Frames.jobV6, frames.dropped == 0 else {
                let header = frames.views.count >= 3 ? frames[2] : UnsafeRawBufferPointer(start: nil, count: 0)
                throw BrokerMessageError(
                    message: "a CIPW06 JOB takes 4 frames: CIPW06, JOB, header, body; got \(count) frames",
                    jobID: header.count >= CIP.jobIDLength ? Array(header[0..<CIP.jobIDLength]) : nil, check: 3)
            }
            return try PackedJobHeader.decode(frames[2], bodySize: frames[3].count, version: version)
        }
        // W3: exactly 7 frames (9 in version 02, 10 in versions 03 and 04, 10 or 12 in version 05: the trace context
        // only when there is one) and an 8-byte job id; a wrong frame count is answered if the job id is usable.
        let hasJobID = frames.views.count >= 3 && frames[2].count == CIP.jobIDLength
        let counts = count == Self.jobFrames(version: version) || (version >= 5 && count == CIP.Frames.jobV3)
        guard counts, frames.dropped == 0, hasJobID else {
            throw BrokerMessageError(
                message: Self.jobShape(version: version) + "; got \(count) frames",
                jobID: hasJobID ? Array(frames[2]) : nil, check: 3
            )
        }
        let jobID = Array(frames[2])
        var idempotencyKey: [UInt8]?
        var attempt = 1
        if version >= 2 {
            let key = frames[7]
            guard key.count <= CIP.maxIdempotencyKeyLength, let number = WireBody.parseDecimal(frames[8]), number >= 1
            else {
                throw BrokerMessageError(
                    message: "the idempotency key must be 0 to 255 bytes and the attempt a decimal of at least 1",
                    jobID: jobID, check: 3)
            }
            if !key.isEmpty { idempotencyKey = Array(key) }
            attempt = number
        }
        // W3, version 05: the trace context, when the JOB has its two frames (both empty also means none).
        var traceContext: TraceContext?
        if version >= 5 && count == CIP.Frames.jobV5 {
            do {
                traceContext = try TraceContext(traceparentFrame: frames[10], tracestateFrame: frames[11])
            } catch {
                throw BrokerMessageError(message: error.message, jobID: jobID, check: 3)
            }
        }
        // W4: the phase, and in version 03 the last phase (F9): a job phase no earlier than F4.
        guard let phase = RequestPhase(frame: frames[4]), phase != .lifecycle else {
            throw BrokerMessageError(
                message: "unknown phase \"\(WireText.display(frames[4]))\" (resolve, confirm or handle)",
                jobID: jobID, check: 4
            )
        }
        var lastPhase = phase
        if version >= 3 {
            guard let last = RequestPhase(frame: frames[9]), last != .lifecycle, last.order >= phase.order else {
                throw BrokerMessageError(
                    message: "the last phase \"\(WireText.display(frames[9]))\" must be resolve, confirm or handle, "
                        + "and not before the phase \"\(phase)\"",
                    jobID: jobID, check: 4
                )
            }
            lastPhase = last
        }
        // W5: the intent type.
        let intentType = frames[3]
        guard !intentType.isEmpty, intentType.count <= CIP.maxIntentTypeLength, JSONText.isValidUTF8(intentType)
        else {
            throw BrokerMessageError(message: "the intent type must be 1 to 255 bytes of UTF-8", jobID: jobID, check: 5)
        }
        // W6: the time left.
        guard let timeLeft = WireBody.parseDecimal(frames[5]) else {
            throw BrokerMessageError(
                message: "the time left must be a decimal number of milliseconds", jobID: jobID, check: 6
            )
        }
        // W7: the body.
        let bodySize = frames[WorkerJob.bodyIndex].count
        guard bodySize > 0 else {
            throw BrokerMessageError(message: "the body frame is empty", jobID: jobID, check: 7)
        }
        return WorkerJob(
            jobID: jobID, intentType: String(decoding: intentType, as: UTF8.self), phase: phase,
            timeLeftMilliseconds: timeLeft, bodySize: bodySize, idempotencyKey: idempotencyKey, attempt: attempt,
            lastPhase: lastPhase, version: version, traceContext: traceContext
        )
    }

    /// The frame count of a JOB in a version.
    private static func jobFrames(version: UInt8) -> Int {
        switch version {
        case 5: CIP.Frames.jobV5
        case 3, 4: CIP.Frames.jobV3
        case 2: CIP.Frames.jobV2
        default: CIP.Frames.job
        }
    }

    /// The frames of a JOB in a version, for error messages.
    private static func jobShape(version: UInt8) -> String {
        let common = "JOB, job id (8 bytes), intent type, phase, time left, body"
        switch version {
        case 5:
            return
                "JOB takes 10 or 12 frames: CIPW05, \(common), idempotency key, attempt, last phase[, traceparent, "
                + "tracestate]"
        case 3, 4:
            return "JOB takes 10 frames: CIPW0\(version), \(common), idempotency key, attempt, last phase"
        case 2: return "JOB takes 9 frames: CIPW02, \(common), idempotency key, attempt"
        default: return "JOB takes 7 frames: CIPW01, \(common)"
        }
    }
}
