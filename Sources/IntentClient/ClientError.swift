import ConciergeJSON

/// A failure of the client itself (errors from the broker arrive as ``Reply`` values with status `.error`).
public struct ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// No broker answered within ``ClientConfiguration/reconnectTimeout`` after the connection dropped or the
        /// broker went silent; the request may still finish (ask ``ConciergeClient/status(of:)`` once a broker is
        /// back).
        public static let connectionLost = Code(rawValue: "connection-lost")
        /// The connection to the broker dropped and came back, and the broker no longer knows the request (its
        /// STATUS answer was `unknown-request`): most likely the broker restarted and lost it. Whether the request
        /// ran is unknown. A client-local ending, like ``connectionLost``, not a CIP error code (PROTOCOL.md 7.2).
        public static let brokerRestarted = Code(rawValue: "broker-restarted")
        /// The client was closed.
        public static let closed = Code(rawValue: "closed")
        /// The same request id is already in flight on this client.
        public static let duplicateRequest = Code(rawValue: "duplicate-request")
        /// The security handshake with the broker failed for good: with CURVE, the broker refused this client's key
        /// (not on its client allowlist); or one side uses CURVE and the other does not. libzmq does not retry such
        /// a connection: requests fail at once until a new client is made. (A connection that merely breaks off
        /// during the handshake — a wrong server key can look like that — is retried, and ends in
        /// ``connectionLost`` whose message names the handshake failure.)
        public static let handshakeFailed = Code(rawValue: "handshake-failed")
        /// The broker does not support cancellation: it answered CANCEL (PROTOCOL.md 4.10.2) with
        /// `unknown-command`. The request goes on as if no CANCEL had been sent.
        public static let cancelUnsupported = Code(rawValue: "cancel-unsupported")
        /// A request id given to the client is empty or longer than 255 bytes.
        public static let badRequestID = Code(rawValue: "bad-request-id")
        /// The client's own adaptive throttle (``ClientConfiguration/throttle``) refused the request: the broker has
        /// been refusing many requests of its intent type with `busy`. The request was never sent, so sending it
        /// again later is always safe (``RetryPolicy`` retries it).
        public static let throttled = Code(rawValue: "throttled")
        /// libzmq refused (bad endpoint, ...).
        public static let transport = Code(rawValue: "transport")

        // The broker's conversation errors (PROTOCOL.md 10.2), thrown by the conversation calls with the broker's
        // error body in ``ClientError/reply``. A refused turn changes nothing: answer again.

        /// No conversation with this id for this client (it never existed, it is gone, or another client owns it).
        public static let unknownConversation = Code(rawValue: "unknown-conversation")
        /// The conversation has ended (``ClientError/conversation`` says how).
        public static let conversationEnded = Code(rawValue: "conversation-ended")
        /// The turn number is not the one the broker expects (another client instance answered in between).
        public static let turnMismatch = Code(rawValue: "turn-mismatch")
        /// An answer for a parameter the conversation does not ask about, or a confirm when nothing waits for one.
        public static let notAsked = Code(rawValue: "not-asked")
        /// An option index out of range of the disambiguation's options.
        public static let badOption = Code(rawValue: "bad-option")
        /// The answer is not valid (not one of the Answer shapes, more than 16 answers, no intent type on turn 1).
        public static let badAnswer = Code(rawValue: "bad-answer")
        /// A parameter would have been asked more than the conversation's `maxAsks` times: the conversation ended
        /// `too-many-asks` (the error body names the `"parameter"`).
        public static let tooManyAsks = Code(rawValue: "too-many-asks")

        // The client's own conversation errors.

        /// A conversation id is empty, longer than 255 bytes, or has a byte outside printable ASCII (0x21-0x7E).
        public static let badConversationID = Code(rawValue: "bad-conversation-id")
        /// A turn of this conversation is already in flight on this client: a conversation has one turn at a time.
        public static let turnInFlight = Code(rawValue: "turn-in-flight")
        /// The broker does not speak `CIPC03` (it answered `unsupported-version`): it has no conversations.
        public static let conversationsUnsupported = Code(rawValue: "conversations-unsupported")

        /// A code with this raw value (a broker's error code the client has no constant for).
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String
    /// How many attempts a request with a ``RetryPolicy`` made before it failed with this error (1 otherwise).
    public internal(set) var attempts: Int
    /// For an error the broker answered (the conversation calls throw those): its error reply, whose body is
    /// `{"code", "message", ...}` (a turn's error body has the `"conversation"` object).
    public internal(set) var reply: Reply?

    public init(code: Code, message: String, attempts: Int = 1) {
        self.code = code
        self.message = message
        self.attempts = attempts
    }

    /// The broker's error reply `reply` as an error: its code, its message.
    init(errorReply reply: Reply) {
        let body = reply.json
        self.init(
            code: Code(rawValue: body?["code"]?.stringValue ?? "internal"),
            message: body?["message"]?.stringValue ?? String(decoding: reply.body.prefix(200), as: UTF8.self),
            attempts: reply.attempts)
        self.reply = reply
    }

    /// The conversation as the broker described it in its error reply (nil if it did not).
    public var conversation: ConversationState? { reply?.json?["conversation"].flatMap(ConversationState.init(json:)) }

    public var description: String {
        attempts > 1 ? "\(code): \(message) (after \(attempts) attempts)" : "\(code): \(message)"
    }
}
