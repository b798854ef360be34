/// Encodes the messages the broker sends to clients through its ROUTER frontend (`Schemas/PROTOCOL.md` sections
/// 4.5-4.7): the client's routing id first, then the frames ``BrokerReplyDecoder`` reads.
///
/// Each function returns false when the sink refused the routing-id frame (the client is gone or its queue is
/// full: nothing was sent).
public enum BrokerReplyEncoder {
    /// A REPLY, STATUS or CONVERSATION answer: `[client, CIPC0v, REPLY|STATUS|CONVERSATION, id, status, phase,
    /// body]`, and from version 2 F6, the flags (`replay` or empty). A CONVERSATION answer's id is the conversation id
    /// and its phase is empty.
    @inlinable @discardableResult
    public static func reply<Sink: WireSink>(
        into sink: inout Sink, to client: some WireBytes, version: UInt8 = 1, kind: BrokerReply.Kind,
        requestID: some WireBytes, status: BrokerReply.Status, phase: some WireBytes, body: WirePayload<Sink.Body>,
        isReplay: Bool = false
    ) throws(Sink.Failure) -> Bool {
        guard try client.append(to: &sink, more: true) else { return false }
        let v2 = version >= 2
        try sink.append(CIP.clientSignature(version: version), more: true)
        try sink.append(kind.name, more: true)
        _ = try requestID.append(to: &sink, more: true)
        try sink.append(status.name, more: true)
        _ = try phase.append(to: &sink, more: true)
        try sink.append(body, more: v2)
        if v2 { try sink.append(isReplay ? CIP.Flags.replay : CIP.Flags.none, more: false) }
        return true
    }

    /// A PONG: `[client, CIPC0v, PONG]`.
    @inlinable @discardableResult
    public static func pong<Sink: WireSink>(
        into sink: inout Sink, to client: some WireBytes, version: UInt8 = 1
    ) throws(Sink.Failure) -> Bool {
        guard try client.append(to: &sink, more: true) else { return false }
        try sink.append(CIP.clientSignature(version: version), more: true)
        try sink.append(CIP.Broker.pong, more: false)
        return true
    }

    /// An error REPLY or STATUS answer with the body `{"code", "message"}` of ``WireBody/error(_:_:)``.
    @inlinable @discardableResult
    public static func error<Sink: WireSink>(
        into sink: inout Sink, to client: some WireBytes, version: UInt8 = 1, kind: BrokerReply.Kind = .reply,
        requestID: some WireBytes, phase: some WireBytes, code: WireErrorCode, message: String
    ) throws(Sink.Failure) -> Bool {
        try reply(
            into: &sink, to: client, version: version, kind: kind, requestID: requestID, status: .error,
            phase: phase, body: .bytes(WireBody.error(code, message)))
    }
}
