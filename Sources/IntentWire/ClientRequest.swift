/// A REQUEST whose frames passed checks 1-10 of `Schemas/PROTOCOL.md` section 4.8. The body is not copied: it
/// stays in frame ``bodyIndex`` of the message, ``bodySize`` bytes.
public struct ClientRequest: Sendable, Hashable {
    /// The index of the body frame (F6).
    public static let bodyIndex = 6

    /// F2: the request id, 1...255 opaque bytes.
    public let requestID: [UInt8]
    /// F3: the intent type, 1...255 bytes of UTF-8, without the definition version F3 may end with
    /// (``definitionVersion``).
    public let intentType: [UInt8]
    /// The definition version the caller asked for: F3 `Type@N` (section 5.18), N a whole number from 1 without
    /// leading zeros; nil when F3 names no version (the broker then pins the oldest version served).
    public let definitionVersion: Int?
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
        idempotencyKey: [UInt8]? = nil, version: UInt8 = 1, traceContext: TraceContext? = nil,
        definitionVersion: Int? = nil
    ) {
        self.requestID = requestID
        self.intentType = intentType
        self.definitionVersion = definitionVersion
        self.phase = phase
        self.deadlineMilliseconds = deadlineMilliseconds
        self.bodySize = bodySize
        self.idempotencyKey = idempotencyKey
        self.version = version
        self.traceContext = traceContext
    }

    /// The intent type as a string (it is valid UTF-8).
    public var intentTypeName: String { String(decoding: intentType, as: UTF8.self) }

    /// F3 as it was sent: the intent type, then `@N` when the request named definition version N (section 5.18).
    public var intentTypeFrame: [UInt8] {
        guard let definitionVersion else { return intentType }
        return intentType + Array("@\(definitionVersion)".utf8)
    }

    /// Splits an F3 of the form `Type@N` (section 5.18) into the type and the version N (1 to 2^31-1, digits without
    /// a leading zero); any other F3 is the type itself, with no version.
    public static func splitVersion(_ frame: some Collection<UInt8>) -> (type: [UInt8], version: Int?) {
        let bytes = Array(frame)
        guard let at = bytes.lastIndex(of: UInt8(ascii: "@")), at > 0 else { return (bytes, nil) }
        let digits = bytes[(at + 1)...]
        guard !digits.isEmpty, digits.count <= 10, digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return (bytes, nil) }
        let number = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard number <= Int(Int32.max) else { return (bytes, nil) }
        return (Array(bytes[..<at]), number)
    }
}
