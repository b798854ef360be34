import ConciergeJSON

/// Encodes the messages a worker sends to the broker's backend (`Schemas/PROTOCOL.md` sections 5.2-5.6, 5.13-5.16),
/// and the STATS query any backend peer may send: the frames ``WorkerMessageDecoder`` reads, F0 first (a DEALER
/// adds no routing-id frame).
///
/// Each function writes one whole message and returns false when the sink refused its first frame (nothing was
/// sent). `version` is the worker's protocol version, 1 (`CIPW01`) to 4 (`CIPW04`).
public enum WorkerMessageEncoder {
    /// READY: `[CIPW0v, READY, capacity, name, type...]`; in version 4 each type is followed by its definition
    /// (the definition file's JSON object, section 5.16), so `intentTypes` pairs each type with its definition
    /// there and with nil before.
    @inlinable @discardableResult
    public static func ready<Sink: WireSink>(
        into sink: inout Sink, version: UInt8, capacity: Int, name: some WireBytes,
        intentTypes: [(type: [UInt8], definition: [UInt8]?)]
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.workerSignature(version: version), more: true) else { return false }
        try sink.append(CIP.Worker.ready, more: true)
        try sink.append(decimal: UInt64(max(0, capacity)), more: true)
        _ = try name.append(to: &sink, more: !intentTypes.isEmpty)
        for (index, entry) in intentTypes.enumerated() {
            let last = index == intentTypes.count - 1
            try sink.append(entry.type, more: !last || (version >= 4 && entry.definition != nil))
            if version >= 4, let definition = entry.definition { try sink.append(definition, more: !last) }
        }
        return true
    }

    /// A decoded READY written out again (its definitions serialized canonically; tests and fuzz targets).
    @discardableResult
    public static func ready<Sink: WireSink>(into sink: inout Sink, _ ready: WorkerReady) throws(Sink.Failure) -> Bool {
        let types = ready.intentTypes.indices.map { index in
            (type: ready.intentTypes[index], definition: ready.definition(at: index).map { $0.json.serialized() })
        }
        return try self.ready(
            into: &sink, version: ready.version, capacity: ready.capacity, name: ready.name, intentTypes: types)
    }

    /// RESULT: `[CIPW0v, RESULT, job id, outcome, body]` (section 5.3); `jobID` is the JOB's F2 as received.
    @inlinable @discardableResult
    public static func result<Sink: WireSink>(
        into sink: inout Sink, version: UInt8, jobID: some WireBytes, outcome: JobOutcome,
        body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.workerSignature(version: version), more: true) else { return false }
        try sink.append(CIP.Worker.result, more: true)
        _ = try jobID.append(to: &sink, more: true)
        try sink.append(outcome.name, more: true)
        try sink.append(body, more: false)
        return true
    }

    /// HEARTBEAT: `[CIPW0v, HEARTBEAT]` (section 5.4).
    @inlinable @discardableResult
    public static func heartbeat<Sink: WireSink>(into sink: inout Sink, version: UInt8) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.heartbeat, into: &sink, version: version)
    }

    /// DRAIN: `[CIPW0v, DRAIN]` (section 5.5).
    @inlinable @discardableResult
    public static func drain<Sink: WireSink>(into sink: inout Sink, version: UInt8) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.drain, into: &sink, version: version)
    }

    /// DISCONNECT: `[CIPW0v, DISCONNECT]` (section 5.6).
    @inlinable @discardableResult
    public static func disconnect<Sink: WireSink>(into sink: inout Sink, version: UInt8) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.disconnect, into: &sink, version: version)
    }

    /// The STATS query: `[CIPW0v, STATS]` (section 5.14; version 2 or later).
    @inlinable @discardableResult
    public static func statsQuery<Sink: WireSink>(into sink: inout Sink, version: UInt8) throws(Sink.Failure) -> Bool {
        try command(CIP.Worker.stats, into: &sink, version: version)
    }

    /// A message of two frames: the signature and `word`.
    @inlinable
    static func command<Sink: WireSink>(
        _ word: StaticString, into sink: inout Sink, version: UInt8
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.workerSignature(version: version), more: true) else { return false }
        try sink.append(word, more: false)
        return true
    }
}
