/// A request the broker accepted and has not ended: what recovery needs to run it again.
public struct JournalRequest: Sendable, Hashable {
    /// The broker's request number, never reused (it must be at most `Int64.max`).
    public var id: UInt64
    /// The client's routing id.
    public var client: [UInt8]
    /// The client's request id.
    public var requestID: [UInt8]
    /// The client's CURVE public key text bytes, empty without CURVE.
    public var identity: [UInt8]
    /// The intent type.
    public var intentType: [UInt8]
    /// The phase the client asked for: `resolve`, `confirm`, `handle` or `lifecycle`.
    public var phase: String
    /// The REQUEST body.
    public var body: [UInt8]
    /// The request's deadline, in milliseconds from ``acceptedAt``.
    public var deadlineMilliseconds: Int
    /// When the broker accepted the request: wall clock, Unix milliseconds.
    public var acceptedAt: Int64
    /// The idempotency key, if the request carried one.
    public var idempotencyKey: [UInt8]?
    /// The attempt number of the key (1 for the first).
    public var attempt: Int
    /// The client protocol version of the REQUEST (1 or 2).
    public var version: UInt8
    /// Whether a handle job went out (set by ``JournalOperation/handleDispatched(request:)``; false when accepted).
    public var handleDispatched: Bool
    /// Duplicates attached to this request through its idempotency key, in the order they attached.
    public var listeners: [JournalRequestKey]

    public init(
        id: UInt64, client: [UInt8], requestID: [UInt8], identity: [UInt8] = [], intentType: [UInt8], phase: String,
        body: [UInt8], deadlineMilliseconds: Int, acceptedAt: Int64, idempotencyKey: [UInt8]? = nil, attempt: Int = 1,
        version: UInt8 = 2, handleDispatched: Bool = false, listeners: [JournalRequestKey] = []
    ) {
        self.id = id
        self.client = client
        self.requestID = requestID
        self.identity = identity
        self.intentType = intentType
        self.phase = phase
        self.body = body
        self.deadlineMilliseconds = deadlineMilliseconds
        self.acceptedAt = acceptedAt
        self.idempotencyKey = idempotencyKey
        self.attempt = attempt
        self.version = version
        self.handleDispatched = handleDispatched
        self.listeners = listeners
    }

    /// The key the client that sent this request names it by.
    public var key: JournalRequestKey { JournalRequestKey(client: client, requestID: requestID, version: version) }
}
