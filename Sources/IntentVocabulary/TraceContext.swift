/// A W3C trace context (Trace Context Level 1: `traceparent`, `tracestate`) as CIP carries it: REQUEST and TURN
/// F8/F9 of `CIPC04`, JOB F10/F11 of `CIPW05` (`Schemas/PROTOCOL.md` sections 4.2, 4.11.1 and 5.7).
///
/// It lives with the protocol's vocabulary (re-exported by IntentWire and IntentKit) because handlers see it too, in
/// `HandlerContext`, without seeing the wire. A value always holds a valid `traceparent` (no trace is `nil`, never an empty value). The initializers check
/// the rules of section 4.2; anything else is `bad-trace-context`.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The `traceparent`: `00-<trace id>-<parent span id>-<flags>` (55 bytes in version `00`).
    public let traceparent: String
    /// The `tracestate`: empty, or 1 to ``maxTracestateLength`` bytes of printable ASCII, passed on unread.
    public let tracestate: String

    /// The length of a version-`00` traceparent, and of the part every version shares.
    public static let traceparentLength = 55
    /// The largest traceparent accepted (a future version may append fields after byte 55).
    public static let maxTraceparentLength = 512
    /// The largest tracestate accepted, in bytes (W3C: 32 entries of at most 256 bytes are allowed, 512 is what
    /// vendors must propagate at least).
    public static let maxTracestateLength = 512

    /// A trace context from its two headers.
    /// - Throws: ``TraceContextError`` when `traceparent` is not a valid W3C traceparent or `tracestate` is not
    ///   empty or 1 to 512 bytes of printable ASCII.
    public init(traceparent: String, tracestate: String = "") throws(TraceContextError) {
        try Self.check(traceparent: Array(traceparent.utf8), tracestate: Array(tracestate.utf8))
        self.traceparent = traceparent
        self.tracestate = tracestate
    }

    /// A trace context from its two frames; nil when both are empty (no trace).
    /// - Throws: ``TraceContextError`` for a frame that breaks the rules (a tracestate without a traceparent too).
    public init?(
        traceparentFrame: some Collection<UInt8>, tracestateFrame: some Collection<UInt8>
    ) throws(TraceContextError) {
        if traceparentFrame.isEmpty {
            guard tracestateFrame.isEmpty else {
                throw TraceContextError(message: "a tracestate needs a traceparent")
            }
            return nil
        }
        let parent = Array(traceparentFrame)
        let state = Array(tracestateFrame)
        try Self.check(traceparent: parent, tracestate: state)
        self.traceparent = String(decoding: parent, as: UTF8.self)
        self.tracestate = String(decoding: state, as: UTF8.self)
    }

    /// A version-`00` trace context from its parts: `traceID` 32 and `spanID` 16 lowercase hex digits.
    /// - Throws: ``TraceContextError`` when a part is not valid.
    public init(
        traceID: String, spanID: String, sampled: Bool, tracestate: String = ""
    ) throws(TraceContextError) {
        try self.init(traceparent: "00-\(traceID)-\(spanID)-\(sampled ? "01" : "00")", tracestate: tracestate)
    }

    /// The version, two lowercase hex digits (`00` today).
    public var version: String { String(traceparent.prefix(2)) }

    /// The trace id: 32 lowercase hex digits, not all zero.
    public var traceID: String { field(3, 32) }
    /// The parent id (the caller's span id): 16 lowercase hex digits, not all zero.
    public var parentSpanID: String { field(36, 16) }
    /// The trace flags, a byte (bit 0: sampled).
    public var traceFlags: UInt8 {
        let bytes = Array(traceparent.utf8)
        return UInt8(Self.hexValue(bytes[53]) << 4 | Self.hexValue(bytes[54]))
    }
    /// Whether the caller sampled (recorded) the trace: flag bit 0.
    public var isSampled: Bool { traceFlags & 1 == 1 }

    /// The traceparent frame's bytes.
    public var traceparentBytes: [UInt8] { Array(traceparent.utf8) }
    /// The tracestate frame's bytes (empty for none).
    public var tracestateBytes: [UInt8] { Array(tracestate.utf8) }

    public var description: String {
        tracestate.isEmpty ? traceparent : "\(traceparent) (tracestate \(tracestate))"
    }

    /// Whether `bytes` is a traceparent this protocol accepts (section 4.2).
    public static func isValidTraceparent(_ bytes: some Collection<UInt8>) -> Bool {
        traceparentProblem(Array(bytes)) == nil
    }

    /// Whether `bytes` is a tracestate this protocol accepts: empty, or 1 to 512 bytes of printable ASCII.
    public static func isValidTracestate(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count <= maxTracestateLength && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    // MARK: Checking

    private static func check(traceparent: [UInt8], tracestate: [UInt8]) throws(TraceContextError) {
        if let problem = traceparentProblem(traceparent) {
            throw TraceContextError(message: "the traceparent \(problem)")
        }
        guard isValidTracestate(tracestate) else {
            throw TraceContextError(message: "the tracestate must be 0 to 512 bytes of printable ASCII")
        }
    }

    /// What is wrong with a traceparent, or nil (W3C Trace Context Level 1, section 3.2).
    private static func traceparentProblem(_ bytes: [UInt8]) -> String? {
        let shape = "must be 00-<32 lowercase hex>-<16 lowercase hex>-<2 lowercase hex>"
        guard bytes.count >= traceparentLength, bytes.count <= maxTraceparentLength else {
            return "\(shape) (55 bytes)"
        }
        for index in 0..<traceparentLength {
            let isDash = index == 2 || index == 35 || index == 52
            guard isDash ? bytes[index] == UInt8(ascii: "-") : isLowerHex(bytes[index]) else { return shape }
        }
        // Version ff is invalid; 00 is exactly 55 bytes; a later version may append `-...` after byte 55.
        if bytes[0] == UInt8(ascii: "f"), bytes[1] == UInt8(ascii: "f") { return "has the invalid version ff" }
        if bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "0") {
            guard bytes.count == traceparentLength else { return "of version 00 is exactly 55 bytes" }
        } else if bytes.count > traceparentLength, bytes[traceparentLength] != UInt8(ascii: "-") {
            return "of a later version continues with - after its 55th byte"
        } else if bytes[traceparentLength...].contains(where: { $0 < 0x21 || $0 > 0x7E }) {
            // What a later version appends is carried as text, as an HTTP header would be: printable ASCII only.
            return "of a later version continues with printable ASCII only"
        }
        guard bytes[3..<35].contains(where: { $0 != UInt8(ascii: "0") }) else { return "has an all-zero trace id" }
        guard bytes[36..<52].contains(where: { $0 != UInt8(ascii: "0") }) else { return "has an all-zero parent id" }
        return nil
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "a") + 10
    }

    private func field(_ offset: Int, _ length: Int) -> String {
        let utf8 = traceparent.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: offset)
        return String(Substring(utf8[start..<utf8.index(start, offsetBy: length)]))
    }
}
