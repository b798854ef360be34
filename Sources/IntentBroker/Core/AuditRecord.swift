import ConciergeJSON
import IntentTranscript
import IntentVocabulary

/// One line of the audit log (`--audit-log`, `Docs/PERMISSIONS.md`): a request accepted, refused or ended, with who
/// sent it and what it was, never its body. The core makes these; ``AuditWriter`` writes them on a thread of its own.
struct AuditRecord: Sendable {
    enum Event: String, Sendable {
        case accepted
        case refused
        case ended
    }

    let event: Event
    /// When, on the broker's monotonic clock (the writer turns it into wall-clock time).
    let at: UInt64
    /// The sender's CURVE public key (Z85, as the ZAP handler gave it); empty without CURVE.
    let key: [UInt8]
    /// The identity its key maps to in the permissions file (nil without one; ``PermissionsGate/unlisted`` for a
    /// key it does not list).
    let identity: String?
    let intentType: [UInt8]
    /// The phase the request asked for (nil for a turn refused before its phase was known).
    let phase: RequestPhase?
    /// `accepted` (or `attached` to a keyed request in flight, `replayed`); the error code of a refusal; `final` or
    /// the error code of an ending.
    let outcome: String
    let requestID: [UInt8]
    /// The connection's routing id.
    let client: [UInt8]

    /// The record as one line of JSON (with its newline); `wallOffset` turns monotonic into Unix nanoseconds.
    func jsonLine(wallOffset: Int64) -> [UInt8] {
        let unix = Int64(clamping: at) &+ wallOffset
        var object: JSONObject = [
            "time": .string(Self.timestamp(unixNanoseconds: unix)),
            "event": .string(event.rawValue),
            "intent": .string(Self.text(intentType)),
            "outcome": .string(outcome),
            "request_id": .string(Self.text(requestID)),
            "client": .string(Self.text(client)),
        ]
        if let phase { object["phase"] = .string(phase.rawValue) }
        if !key.isEmpty { object["key"] = .string(Self.text(key)) }
        if let identity { object["identity"] = .string(identity) }
        return JSONValue.object(object).serialized() + [0x0A]
    }

    /// Bytes as text (routing ids may be binary: bytes that are not UTF-8 become U+FFFD).
    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T13:05:00.123Z`, as transcripts write times.
    static func timestamp(unixNanoseconds: Int64) -> String {
        let milliseconds = unixNanoseconds / 1_000_000
        return TranscriptClock.timestamp(
            secondsSinceEpoch: Int(milliseconds / 1000), milliseconds: Int(milliseconds % 1000))
    }
}
