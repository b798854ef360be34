// Fuzz target: the worker's decoder of broker messages (IntentWire.BrokerMessageDecoder, PROTOCOL.md 5.12, worker
// side).
//
// Input: FuzzInput.message. Options: bits 0-1 frames the receiver "dropped" (0-3).
//
// Invariants: decoding never traps; a decoded JOB (CIPW01, CIPW02 with its key and attempt, CIPW03 and CIPW04 with
// its last phase too, CIPW05 with its trace context too, CIPW06 whose packed header written out anew is the one
// received) or CANCEL agrees with its frames; an error carries a job id exactly when the message is a JOB with an
// 8-byte F2 (CIPW06: a header of at least 8 bytes, the job id its first 8) (checks W3-W7), never for W1 and W2 (nor
// for a malformed CANCEL).

import IntentWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJobFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (options, frames) = FuzzInput.message(UnsafeRawBufferPointer(start: data, count: size))
    let dropped = Int(options & 3)
    let outcome = WireFrames.withFrames(frames, dropped: dropped) { wire in
        Result { () throws(BrokerMessageError) in try BrokerMessageDecoder().decode(wire) }
    }
    switch outcome {
    case .success(let command):
        let v6 = frames.count >= 2 && frames[0] == FuzzInput.ascii("CIPW06")
        if v6, case .job(let job) = command {
            // Version 06 (PROTOCOL.md 5.17): 4 frames; the header written out anew is the one received (an empty
            // traceparent and tracestate, meaning none, are the only other form of a header without a trace).
            invariant(dropped == 0 && frames.count == 4 && frames[1] == FuzzInput.ascii("JOB"), "CIPW06 JOB frames")
            invariant(job.version == 6 && job.jobID == Array(frames[2].prefix(8)), "CIPW06 version and job id")
            invariant(job.bodySize == frames[3].count && job.bodySize > 0, "CIPW06 body")
            invariant(job.phase != .lifecycle && job.lastPhase.order >= job.phase.order, "CIPW06 phases")
            invariant(job.attempt >= 1 && (job.idempotencyKey?.count ?? 1) >= 1, "CIPW06 attempt and key")
            // The time left is read as it is, and clamped to the largest Int (292 million years of milliseconds).
            let timeLeft = frames[2][10..<18].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            invariant(job.timeLeftMilliseconds == Int(clamping: timeLeft), "CIPW06 time left")
            let header = PackedJobHeader.encode(
                jobID: job.jobID, intentType: Array(job.intentType.utf8), phase: job.phase, lastPhase: job.lastPhase,
                timeLeftMilliseconds: timeLeft, attempt: job.attempt,
                idempotencyKey: job.idempotencyKey, traceContext: job.traceContext)
            invariant(
                header == frames[2] || (job.traceContext == nil && header + [0, 0, 0, 0] == frames[2]),
                "CIPW06 header written out anew")
            return 0
        }
        let v5 = frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPW05") || v6)
        let v4 = frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPW04") || v5)
        let v3 = frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPW03") || v4)
        let v2 = frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPW02") || v3)
        invariant(frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPW01") || v2), "signature")
        switch command {
        case .job(let job):
            invariant(
                dropped == 0 && (frames.count == (v3 ? 10 : v2 ? 9 : 7) || (v5 && frames.count == 12))
                    && frames[1] == FuzzInput.ascii("JOB"),
                "JOB frames")
            invariant(job.version == (v5 ? 5 : v4 ? 4 : v3 ? 3 : v2 ? 2 : 1), "version")
            if v5, let trace = job.traceContext {
                // Version 05: F10 a W3C traceparent, F11 a tracestate (PROTOCOL.md 4.2).
                invariant(trace.traceparentBytes == frames[10] && trace.tracestateBytes == frames[11], "trace frames")
                invariant(TraceContext.isValidTraceparent(frames[10]), "traceparent")
                invariant(TraceContext.isValidTracestate(frames[11]), "tracestate")
            } else {
                // Version 05 without a trace context: 10 frames, or 12 with F10 and F11 empty (PROTOCOL.md 5.7).
                invariant(
                    job.traceContext == nil
                        && (frames.count == 10 || !v5 || (frames[10].isEmpty && frames[11].isEmpty)),
                    "no trace")
            }
            if v3 {
                // Version 03: F9 the last phase, a job phase not before F4.
                invariant(FuzzInput.ascii(job.lastPhase.description) == frames[9], "last phase")
                invariant(job.lastPhase != .lifecycle && job.lastPhase.order >= job.phase.order, "last phase order")
            } else {
                invariant(job.lastPhase == job.phase, "a last phase before version 03")
            }
            if v2 {
                // Version 02: F7 the key (at most 255 bytes, empty is none), F8 the attempt (a decimal, at least 1).
                invariant(frames[7].count <= 255 && job.idempotencyKey == (frames[7].isEmpty ? nil : frames[7]), "key")
                invariant(job.attempt >= 1 && Int(String(decoding: frames[8], as: UTF8.self)) == job.attempt, "attempt")
            } else {
                invariant(job.idempotencyKey == nil && job.attempt == 1, "a key or an attempt in version 01")
            }
            invariant(job.jobID == frames[2] && job.jobID.count == 8, "job id")
            invariant(FuzzInput.ascii(job.intentType) == frames[3] && (1...255).contains(frames[3].count), "type")
            invariant(job.phase != .lifecycle && FuzzInput.ascii(job.phase.description) == frames[4], "phase")
            invariant(Int(String(decoding: frames[5], as: UTF8.self)) == job.timeLeftMilliseconds, "time left")
            invariant(job.bodySize == frames[6].count && job.bodySize > 0, "body")
        case .heartbeat: invariant(frames[1] == FuzzInput.ascii("HEARTBEAT"), "HEARTBEAT")
        case .drain: invariant(frames[1] == FuzzInput.ascii("DRAIN"), "DRAIN")
        case .disconnect: invariant(frames[1] == FuzzInput.ascii("DISCONNECT"), "DISCONNECT")
        case .cancel(let jobID):
            invariant(v2 && frames.count == 3 && frames[1] == FuzzInput.ascii("CANCEL"), "CANCEL frames")
            invariant(jobID == frames[2] && jobID.count == 8, "CANCEL job id")
        case .error(let code, let message):
            invariant(frames[1] == FuzzInput.ascii("ERROR"), "ERROR")
            invariant(code.utf8.count <= 200 && message.utf8.count <= 13_000, "ERROR text is not cut")
        }
    case .failure(let error):
        invariant((1...7).contains(error.check) && error.code == .malformed, "check \(error.check)")
        let signed =
            frames.count >= 2
            && ["CIPW01", "CIPW02", "CIPW03", "CIPW04", "CIPW05", "CIPW06"].map(FuzzInput.ascii).contains(frames[0])
        let isJob = signed && frames[1] == FuzzInput.ascii("JOB")
        let packed = isJob && frames[0] == FuzzInput.ascii("CIPW06")
        let usableID = isJob && frames.count >= 3 && (packed ? frames[2].count >= 8 : frames[2].count == 8)
        invariant((error.jobID != nil) == usableID, "job id answered: \(error.jobID != nil), usable: \(usableID)")
        if let id = error.jobID { invariant(id == Array(frames[2].prefix(8)), "job id") }
        if error.check >= 4 { invariant(error.jobID != nil, "W\(error.check) without a job id") }
        invariant(!error.message.isEmpty && error.message.utf8.count <= 300, "message")
    }
    return 0
}
