/// Decodes the messages a client receives from the broker's frontend (`Schemas/PROTOCOL.md` sections 4.5-4.7):
/// REPLY, STATUS answers and PONG. The one reply decoder of the Swift client and the load client.
///
/// Pure and allocation-free: no sockets, no clocks, and the result borrows the frames (``BrokerReply``).
public struct BrokerReplyDecoder: Sendable {
    /// A decoder.
    public init() {}

    /// Decodes one message from the broker.
    /// - Throws: ``BrokerReplyError`` when the message is not a REPLY, STATUS answer or PONG of `CIPC01` or
    ///   `CIPC02` with the frames of its version.
    @inlinable
    public func decode(_ frames: WireFrames) throws(BrokerReplyError) -> BrokerReply {
        let count = frames.count
        guard count >= 2, let version = ClientMessageDecoder.version(ofSignature: frames[0]) else {
            throw BrokerReplyError(code: .signature, message: "not a CIPC01 to CIPC04 message")
        }
        let command = frames[1]
        let kind: BrokerReply.Kind
        if CIP.Broker.reply.matches(command) {
            kind = .reply
        } else if CIP.Broker.status.matches(command) {
            kind = .status
        } else if version >= 3, CIP.Broker.conversation.matches(command) {
            kind = .conversation
        } else if CIP.Broker.pong.matches(command) {
            guard count == 2 else {
                throw BrokerReplyError(code: .frameCount, message: "a PONG has 2 frames, not \(count)")
            }
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            return BrokerReply(
                kind: .pong, version: version, requestID: empty, status: .final, phase: empty, body: empty,
                isReplay: false)
        } else {
            throw BrokerReplyError(code: .command, message: "unknown command \"\(WireText.display(command))\"")
        }
        // Version 01: 6 frames; version 02 adds F6, the flags.
        let expected = version >= 2 ? 7 : 6
        guard count == expected, frames.dropped == 0 else {
            throw BrokerReplyError(
                code: .frameCount,
                message: "a \(kind.name) answer of version \(version) has \(expected) frames, not \(count)")
        }
        guard let status = BrokerReply.Status(frame: frames[3]) else {
            throw BrokerReplyError(code: .status, message: "unknown status \"\(WireText.display(frames[3]))\"")
        }
        return BrokerReply(
            kind: kind, version: version, requestID: frames[2], status: status, phase: frames[4], body: frames[5],
            isReplay: version >= 2 && CIP.Flags.replay.matches(frames[6]))
    }

    /// Decodes a message given as byte arrays and hands the reply to `body` (tests, cold paths): the reply's views
    /// are valid only during the call.
    public func decode<R>(
        _ frames: [[UInt8]], _ body: (BrokerReply) -> R
    ) throws(BrokerReplyError) -> R {
        try WireFrames.withFrames(frames) { frames in
            Result { () throws(BrokerReplyError) in body(try decode(frames)) }
        }.get()
    }
}
