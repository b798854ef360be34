/// An idempotency record: what the broker knows of one (identity, intent type, key).
public struct JournalKeyRecord: Sendable, Hashable {
    /// Where the key's work stands.
    public enum State: Sendable, Hashable {
        /// A request with this key is open.
        case inFlight(request: UInt64)
        /// The key's work ended with this reply.
        case completed(isError: Bool, phase: String, body: [UInt8])
        /// A handle job went out and its answer was lost: nothing runs now, and a retry runs the next attempt.
        case outcomeUnknown
    }

    /// The client's CURVE public key text bytes, empty without CURVE.
    public var identity: [UInt8]
    /// The intent type.
    public var intentType: [UInt8]
    /// The idempotency key.
    public var key: [UInt8]
    /// The fingerprint of the request that first used the key (16 bytes).
    public var fingerprint: [UInt8]
    /// How many attempts ran with this key.
    public var attempts: Int
    /// Where the key's work stands.
    public var state: State
    /// When the key's work ended (Unix milliseconds); nil while in flight.
    public var endedAt: Int64?

    public init(
        identity: [UInt8], intentType: [UInt8], key: [UInt8], fingerprint: [UInt8], attempts: Int, state: State,
        endedAt: Int64?
    ) {
        self.identity = identity
        self.intentType = intentType
        self.key = key
        self.fingerprint = fingerprint
        self.attempts = attempts
        self.state = state
        self.endedAt = endedAt
    }
}
