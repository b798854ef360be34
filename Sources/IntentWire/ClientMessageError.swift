/// Why the broker refuses a client message, and what its error answer carries (`Schemas/PROTOCOL.md` section 4.8).
///
/// The broker answers with ``answer`` (REPLY, or STATUS for a malformed STATUS): F2 ``requestID`` (empty when the
/// message has no usable one), F3 `error`, F4 ``phase`` (empty when nil) and the body `{"code": code, "message":
/// message}`; then it drops the message.
public struct ClientMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The command of the error answer.
    public enum Answer: Sendable, Hashable {
        /// A REPLY (every refused message but a malformed STATUS).
        case reply
        /// A STATUS (a malformed STATUS).
        case status
        /// A CONVERSATION answer (a malformed CONVERSATION or END; F2 is then the conversation id).
        case conversation

        /// The answer's F1.
        public var command: StaticString {
            switch self {
            case .reply: CIP.Broker.reply
            case .status: CIP.Broker.status
            case .conversation: CIP.Broker.conversation
            }
        }
    }

    /// The stable error code.
    public let code: WireErrorCode
    /// Human-readable text for the error body.
    public let message: String
    /// The command to answer with.
    public let answer: Answer
    /// F2 of the answer: the message's F2 echoed where section 4.8 says so, else empty.
    public let requestID: [UInt8]
    /// F4 of the answer: the requested phase once it is known to be valid, else nil (an empty frame).
    public let phase: RequestPhase?
    /// The number of the failed check in section 4.8, 1-10 (4 for a malformed STATUS).
    public let check: Int

    /// An error with these fields (the decoder makes them).
    public init(
        code: WireErrorCode, message: String, answer: Answer = .reply, requestID: [UInt8] = [],
        phase: RequestPhase? = nil, check: Int
    ) {
        self.code = code
        self.message = message
        self.answer = answer
        self.requestID = requestID
        self.phase = phase
        self.check = check
    }

    /// F4 of the answer: the phase's name, or empty.
    public var phaseFrame: StaticString { phase?.name ?? "" }

    /// The error body, `{"code": code, "message": message}`.
    public var body: [UInt8] { WireBody.error(code, message) }

    public var description: String { "\(code) (check \(check)): \(message)" }
}
