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
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String
    /// How many attempts a request with a ``RetryPolicy`` made before it failed with this error (1 otherwise).
    public internal(set) var attempts: Int

    public init(code: Code, message: String, attempts: Int = 1) {
        self.code = code
        self.message = message
        self.attempts = attempts
    }

    public var description: String {
        attempts > 1 ? "\(code): \(message) (after \(attempts) attempts)" : "\(code): \(message)"
    }
}
