/// Encodes the messages a client sends to the broker's frontend (`Schemas/PROTOCOL.md` sections 4.2-4.4 and 4.10):
/// the frames ``ClientMessageDecoder`` reads, F0 first (a DEALER adds no routing-id frame).
///
/// Each function writes one whole message into `sink` and returns false when the sink refused its first frame
/// (nothing was sent). Version 1 is `CIPC01`, version 2 `CIPC02` (a keyed REQUEST, CANCEL), version 3 `CIPC03`
/// (conversations: TURN, CONVERSATION, END), version 4 `CIPC04` (a REQUEST or TURN with a trace context).
public enum ClientMessageEncoder {
    /// REQUEST: `[CIPC0v, REQUEST, id, type, phase, deadline, body]`, from version 2 F7, the idempotency key
    /// (empty for none), and in version 4 F8 and F9, the trace context (both empty for none). A nil
    /// `deadlineMilliseconds` leaves F5 empty (the broker's default).
    @inlinable @discardableResult
    public static func request<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 1, requestID: some WireBytes, intentType: some WireBytes,
        phase: RequestPhase, deadlineMilliseconds: Int?, body: WirePayload<Sink.Body>, idempotencyKey: [UInt8]? = nil,
        traceContext: TraceContext? = nil
    ) throws(Sink.Failure) -> Bool {
        let v2 = version >= 2
        let v4 = version >= 4
        guard try sink.append(CIP.clientSignature(version: version), more: true) else { return false }
        try sink.append(CIP.Client.request, more: true)
        _ = try requestID.append(to: &sink, more: true)
        _ = try intentType.append(to: &sink, more: true)
        try sink.append(phase.name, more: true)
        if let deadlineMilliseconds {
            try sink.append(decimal: UInt64(max(0, deadlineMilliseconds)), more: true)
        } else {
            _ = try sink.append(UnsafeRawBufferPointer(start: nil, count: 0), more: true)
        }
        try sink.append(body, more: v2)
        if v2 { try sink.append(idempotencyKey ?? [], more: v4) }
        if v4 { try appendTraceContext(traceContext, into: &sink) }
        return true
    }

    /// F8 and F9 of a `CIPC04` REQUEST or TURN: the traceparent and the tracestate, both empty for none.
    @inlinable
    static func appendTraceContext<Sink: WireSink>(
        _ traceContext: TraceContext?, into sink: inout Sink
    ) throws(Sink.Failure) {
        try sink.append(traceContext?.traceparent ?? "", more: true)
        try sink.append(traceContext?.tracestate ?? "", more: false)
    }

    /// A decoded REQUEST written out again, with its body (tests and fuzz targets: `decode(encode(x)) == x`).
    @inlinable @discardableResult
    public static func request<Sink: WireSink>(
        into sink: inout Sink, _ request: ClientRequest, body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        try self.request(
            into: &sink, version: request.version, requestID: request.requestID, intentType: request.intentTypeFrame,
            phase: request.phase, deadlineMilliseconds: request.deadlineMilliseconds, body: body,
            idempotencyKey: request.idempotencyKey, traceContext: request.traceContext)
    }

    /// STATUS: `[CIPC0v, STATUS, id]` (section 4.3).
    @inlinable @discardableResult
    public static func status<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 1, requestID: some WireBytes
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.clientSignature(version: version), more: true) else { return false }
        try sink.append(CIP.Client.status, more: true)
        _ = try requestID.append(to: &sink, more: false)
        return true
    }

    /// PING: `[CIPC0v, PING]` (section 4.4).
    @inlinable @discardableResult
    public static func ping<Sink: WireSink>(into sink: inout Sink, version: UInt8 = 1) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.clientSignature(version: version), more: true) else { return false }
        try sink.append(CIP.Client.ping, more: false)
        return true
    }

    /// CANCEL: `[CIPC0v, CANCEL, id]` (section 4.10.2; version 2 or later).
    @inlinable @discardableResult
    public static func cancel<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 2, requestID: some WireBytes
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.clientSignature(version: max(2, version)), more: true) else { return false }
        try sink.append(CIP.Client.cancel, more: true)
        _ = try requestID.append(to: &sink, more: false)
        return true
    }

    /// TURN: `[CIPC03, TURN, request id, conversation id, turn, deadline, body, flags]` (section 4.11), and in
    /// version 4 F8 and F9, the trace context (both empty for none). A nil `deadlineMilliseconds` leaves F5 empty
    /// (the broker's default).
    @inlinable @discardableResult
    public static func turn<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 3, requestID: some WireBytes, conversationID: some WireBytes,
        turn: Int, deadlineMilliseconds: Int?, body: WirePayload<Sink.Body>, flags: ClientTurn.Flags = [],
        traceContext: TraceContext? = nil
    ) throws(Sink.Failure) -> Bool {
        let v4 = version >= 4
        guard try sink.append(CIP.clientSignature(version: max(3, version)), more: true) else { return false }
        try sink.append(CIP.Client.turn, more: true)
        _ = try requestID.append(to: &sink, more: true)
        _ = try conversationID.append(to: &sink, more: true)
        try sink.append(decimal: UInt64(max(0, turn)), more: true)
        if let deadlineMilliseconds {
            try sink.append(decimal: UInt64(max(0, deadlineMilliseconds)), more: true)
        } else {
            _ = try sink.append(UnsafeRawBufferPointer(start: nil, count: 0), more: true)
        }
        try sink.append(body, more: true)
        try sink.append(flags.frame, more: v4)
        if v4 { try appendTraceContext(traceContext, into: &sink) }
        return true
    }

    /// A decoded TURN written out again, with its body (tests and fuzz targets).
    @inlinable @discardableResult
    public static func turn<Sink: WireSink>(
        into sink: inout Sink, _ turn: ClientTurn, body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        try self.turn(
            into: &sink, version: turn.version, requestID: turn.requestID, conversationID: turn.conversationID,
            turn: turn.turn, deadlineMilliseconds: turn.deadlineMilliseconds, body: body, flags: turn.flags,
            traceContext: turn.traceContext)
    }

    /// CONVERSATION: `[CIPC03, CONVERSATION, conversation id]`: read a conversation (section 4.11).
    @inlinable @discardableResult
    public static func conversation<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 3, conversationID: some WireBytes
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.clientSignature(version: max(3, version)), more: true) else { return false }
        try sink.append(CIP.Client.conversation, more: true)
        _ = try conversationID.append(to: &sink, more: false)
        return true
    }

    /// END: `[CIPC03, END, conversation id]`: end a conversation (section 4.11).
    @inlinable @discardableResult
    public static func end<Sink: WireSink>(
        into sink: inout Sink, version: UInt8 = 3, conversationID: some WireBytes
    ) throws(Sink.Failure) -> Bool {
        guard try sink.append(CIP.clientSignature(version: max(3, version)), more: true) else { return false }
        try sink.append(CIP.Client.end, more: true)
        _ = try conversationID.append(to: &sink, more: false)
        return true
    }

    /// A decoded client command written out again (tests and fuzz targets); a REQUEST needs its body.
    @inlinable @discardableResult
    public static func command<Sink: WireSink>(
        into sink: inout Sink, _ command: ClientCommand, version: UInt8 = 1, body: WirePayload<Sink.Body>
    ) throws(Sink.Failure) -> Bool {
        switch command {
        case .request(let request): try self.request(into: &sink, request, body: body)
        case .status(let id): try status(into: &sink, version: version, requestID: id)
        case .ping: try ping(into: &sink, version: version)
        case .cancel(let id): try cancel(into: &sink, version: version, requestID: id)
        case .turn(let turn): try self.turn(into: &sink, turn, body: body)
        case .readConversation(let id): try conversation(into: &sink, version: version, conversationID: id)
        case .endConversation(let id): try end(into: &sink, version: version, conversationID: id)
        }
    }
}
