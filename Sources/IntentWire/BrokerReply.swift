/// A message from the broker as a client decodes it (`Schemas/PROTOCOL.md` sections 4.5-4.7): a REPLY, a STATUS
/// answer or a PONG.
///
/// The frames are borrowed, not copied (a load client decodes every reply on its hot path): ``requestID``,
/// ``phase`` and ``body`` are views valid only as long as the ``WireFrames`` decoded (until the next receive into
/// the same buffer). Copy what you keep.
public struct BrokerReply {
    /// F1: what the message answers.
    public enum Kind: Sendable, Hashable {
        /// REPLY: the answer to a REQUEST.
        case reply
        /// STATUS: the answer to a STATUS query (or to a CANCEL about a request not in flight).
        case status
        /// PONG: the answer to a PING (F2 and later are empty).
        case pong
        /// CONVERSATION (version 03): the answer to CONVERSATION or END; F2 is the conversation id, the body a
        /// Conversation object (or an error body).
        case conversation

        /// The command word of a REPLY or STATUS answer (`PONG` for a PONG).
        @inlinable
        public var name: StaticString {
            switch self {
            case .reply: CIP.Broker.reply
            case .status: CIP.Broker.status
            case .pong: CIP.Broker.pong
            case .conversation: CIP.Broker.conversation
            }
        }
    }

    /// F3 of a REPLY or STATUS answer.
    public enum Status: Sendable, Hashable, CaseIterable {
        /// The request's answer.
        case final
        /// The deadline passed and the work goes on.
        case progress
        /// The request failed (or, for STATUS, is unknown); the body is `{"code", "message"}`.
        case error

        /// The status word.
        @inlinable
        public var name: StaticString {
            switch self {
            case .final: CIP.Status.final
            case .progress: CIP.Status.progress
            case .error: CIP.Status.error
            }
        }

        /// Parses a status frame; nil for a word that is none of the three.
        public init?(frame: UnsafeRawBufferPointer) {
            if CIP.Status.final.matches(frame) {
                self = .final
            } else if CIP.Status.progress.matches(frame) {
                self = .progress
            } else if CIP.Status.error.matches(frame) {
                self = .error
            } else {
                return nil
            }
        }
    }

    /// F1.
    public let kind: Kind
    /// F0: the client protocol version (1: `CIPC01`, 2: `CIPC02`, 3: `CIPC03`).
    public let version: UInt8
    /// F2: the request id as the client sent it (empty for a PONG, or an error about a message without a usable id).
    public let requestID: UnsafeRawBufferPointer
    /// F3 (``Status/final`` for a PONG).
    public let status: Status
    /// F4: the phase word (may be empty).
    public let phase: UnsafeRawBufferPointer
    /// F5: the body.
    public let body: UnsafeRawBufferPointer
    /// Version 2 and later, F6: the answer is a stored final reply sent again for an idempotency key (`replay`).
    public let isReplay: Bool

    /// A reply with these fields (the decoder makes them).
    public init(
        kind: Kind, version: UInt8, requestID: UnsafeRawBufferPointer, status: Status, phase: UnsafeRawBufferPointer,
        body: UnsafeRawBufferPointer, isReplay: Bool
    ) {
        self.kind = kind
        self.version = version
        self.requestID = requestID
        self.status = status
        self.phase = phase
        self.body = body
        self.isReplay = isReplay
    }

    /// Whether the message ends its request: a `final` or `error` REPLY or STATUS answer.
    @inlinable public var isFinal: Bool { kind != .pong && status != .progress }
}
