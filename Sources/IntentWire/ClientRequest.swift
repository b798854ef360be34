/// A REQUEST whose frames passed checks 1-10 of `Schemas/PROTOCOL.md` section 4.8. The body is not copied: it
/// stays in frame ``bodyIndex`` of the message, ``bodySize`` bytes.
public struct ClientRequest: Sendable, Hashable {
    /// The index of the body frame (F6).
    public static let bodyIndex = 6

    /// F2: the request id, 1...255 opaque bytes.
    public let requestID: [UInt8]
    /// F3: the intent type, 1...255 bytes of UTF-8.
    public let intentType: [UInt8]
    /// F4: the requested phase.
    public let phase: RequestPhase
    /// F5: the deadline in milliseconds, from 10 to the limits' maximum; nil (an empty F5) for the broker's default.
    public let deadlineMilliseconds: Int?
    /// The size of the body (F6): from 1 to the limits' maximum body size.
    public let bodySize: Int
    /// The caller's idempotency key (`Docs/IDEMPOTENCY.md`: F7 of a `CIPC02` REQUEST), 1...255 bytes;
    /// nil for none (every `CIPC01` REQUEST).
    public let idempotencyKey: [UInt8]?
    /// The client protocol version the REQUEST came in (1: `CIPC01` to 4: `CIPC04`); its answers use the same.
    public let version: UInt8
    /// The caller's W3C trace context (F8 and F9 of a `CIPC04` REQUEST); nil for none (and before version 04).
    public let traceContext: TraceContext?

    /// A request with these fields (the decoder makes them; tests and fuzz targets compare them).
    public init(
        requestID: [UInt8], intentType: [UInt8], phase: RequestPhase, deadlineMilliseconds: Int?, bodySize: Int,
        idempotencyKey: [UInt8]? = nil, version: UInt8 = 1, traceContext: TraceContext? = nil
    ) {
        self.requestID = requestID
        self.intentType = intentType
        self.phase = phase
        self.deadlineMilliseconds = deadlineMilliseconds
        self.bodySize = bodySize
        self.idempotencyKey = idempotencyKey
        self.version = version
        self.traceContext = traceContext
    }

    /// The intent type as a string (it is valid UTF-8).
    public var intentTypeName: String { String(decoding: intentType, as: UTF8.self) }
}
