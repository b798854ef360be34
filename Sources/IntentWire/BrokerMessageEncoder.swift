/// Encodes the messages the broker sends to workers (and STATS answers to any peer) through its ROUTER backend
/// (`Schemas/PROTOCOL.md` sections 5.5, 5.7-5.9, 5.13-5.15): the peer's routing id first, then the frames
/// ``BrokerMessageDecoder`` reads, in the worker's version (`version`: 1 to 6).
///
/// Each function returns false when the sink refused the routing-id frame (the worker's queue is full, or it is
/// gone: nothing was sent).
public enum BrokerMessageEncoder {
    /// JOB: `[worker, CIPW0v, JOB, job id, type, phase, time left, body]`; version 2 adds F7 the idempotency key
    /// (empty for none) and F8 the attempt, versions 3 and later F9 the last phase (section 5.15), version 5 F10 and
    /// F11 the trace context, only when there is one (an untraced JOB keeps the 10 frames of version 04); version 6
    /// packs all but the body into one header frame (``PackedJobHeader``, section 5.17): `[worker, CIPW06, JOB,
    /// header, body]`. `jobID` is written as its 8 bytes in host order (``WireWord``),
    /// as the broker reads the RESULT's F2 back.
    @inlinable @discardableResult
    public static func job<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8, jobID: some WireBytes,
        intentType: some WireBytes, phase: RequestPhase, timeLeftMilliseconds: UInt64, body: WirePayload<Sink.Body>,
        idempotencyKey: [UInt8]? = nil, attempt: Int = 1, lastPhase: RequestPhase? = nil,
        traceContext: TraceContext? = nil
    ) throws(Sink.Failure) -> Bool {
        guard try worker.append(to: &sink, more: true) else { return false }
        if version >= 6 {
            // Section 5.17: everything but the body in one header frame.
            try sink.append(CIP.workerSignature(version: version), more: true)
            try sink.append(CIP.Worker.job, more: true)
            let header = PackedJobHeader.encode(
                jobID: jobID, intentType: intentType, phase: phase, lastPhase: lastPhase ?? phase,
                timeLeftMilliseconds: timeLeftMilliseconds, attempt: attempt, idempotencyKey: idempotencyKey,
                traceContext: traceContext)
            try sink.append(header, more: true)
            try sink.append(body, more: false)
            return true
        }
        let v2 = version >= 2
        try sink.append(CIP.workerSignature(version: version), more: true)
        try sink.append(CIP.Worker.job, more: true)
        _ = try jobID.append(to: &sink, more: true)
        _ = try intentType.append(to: &sink, more: true)
        try sink.append(phase.name, more: true)
        try sink.append(decimal: timeLeftMilliseconds, more: true)
        try sink.append(body, more: v2)
        if v2 {
            try sink.append(idempotencyKey ?? [], more: true)
            try sink.append(decimal: UInt64(max(1, attempt)), more: version >= 3)
            let traced = version >= 5 ? traceContext : nil
            if version >= 3 { try sink.append((lastPhase ?? phase).name, more: traced != nil) }
            if let traced {
                try sink.append(traced.traceparent, more: true)
                try sink.append(traced.tracestate, more: false)
            }
        }
        return true
    }

    /// A decoded JOB written out again (tests and fuzz targets: `decode(encode(x)) == x`).
    @inlinable @discardableResult
    public static func job<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, _ job: WorkerJob, body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        try self.job(
            into: &sink, to: worker, version: job.version, jobID: job.jobID, intentType: job.intentType,
            phase: job.phase, timeLeftMilliseconds: UInt64(max(0, job.timeLeftMilliseconds)), body: body,
            idempotencyKey: job.idempotencyKey, attempt: job.attempt, lastPhase: job.lastPhase,
            traceContext: job.traceContext)
    }

    /// HEARTBEAT: `[worker, CIPW0v, HEARTBEAT]` (section 5.8).
    @inlinable @discardableResult
    public static func heartbeat<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8
    ) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.heartbeat, into: &sink, to: worker, version: version)
    }

    /// DRAIN, the acknowledgement of the worker's DRAIN: `[worker, CIPW0v, DRAIN]` (section 5.5).
    @inlinable @discardableResult
    public static func drain<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8
    ) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.drain, into: &sink, to: worker, version: version)
    }

    /// DISCONNECT: `[worker, CIPW0v, DISCONNECT]` (section 5.8).
    @inlinable @discardableResult
    public static func disconnect<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8
    ) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.disconnect, into: &sink, to: worker, version: version)
    }

    /// ERROR: `[worker, CIPW0v, ERROR, code, message]` (section 5.9).
    @inlinable @discardableResult
    public static func error<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8, code: WireErrorCode, message: String
    ) throws(Sink.Failure) -> Bool {
        guard try worker.append(to: &sink, more: true) else { return false }
        try sink.append(CIP.workerSignature(version: version), more: true)
        try sink.append(CIP.Worker.error, more: true)
        try sink.append(code.rawValue, more: true)
        try sink.append(message, more: false)
        return true
    }

    /// CANCEL: `[worker, CIPW0v, CANCEL, job id]` (section 5.13; version 2 or later).
    @inlinable @discardableResult
    public static func cancel<Sink: WireSink>(
        into sink: inout Sink, to worker: some WireBytes, version: UInt8, jobID: some WireBytes
    ) throws(Sink.Failure) -> Bool {
        guard try worker.append(to: &sink, more: true) else { return false }
        try sink.append(CIP.workerSignature(version: version), more: true)
        try sink.append(CIP.Worker.cancel, more: true)
        _ = try jobID.append(to: &sink, more: false)
        return true
    }

    /// The answer to a STATS query: `[peer, CIPW0v, STATS, body]` (section 5.14), in the query's version.
    @inlinable @discardableResult
    public static func stats<Sink: WireSink>(
        into sink: inout Sink, to peer: some WireBytes, version: UInt8, body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        guard try peer.append(to: &sink, more: true) else { return false }
        try sink.append(CIP.workerSignature(version: version), more: true)
        try sink.append(CIP.Worker.stats, more: true)
        try sink.append(body, more: false)
        return true
    }

    /// A message of the routing id, the signature and `word`.
    @inlinable
    static func command<Sink: WireSink>(
        _ word: StaticString, into sink: inout Sink, to worker: some WireBytes, version: UInt8
    ) throws(Sink.Failure) -> Bool {
        guard try worker.append(to: &sink, more: true) else { return false }
        try sink.append(CIP.workerSignature(version: version), more: true)
        try sink.append(word, more: false)
        return true
    }
}
