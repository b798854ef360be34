import ConciergeJSON
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

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T13:05:00.123Z`.
    static func timestamp(unixNanoseconds: Int64) -> String {
        let milliseconds = unixNanoseconds / 1_000_000
        let seconds = milliseconds / 1000
        let days = seconds / 86_400
        let rest = seconds % 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds % 1000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return
            "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60)).\(fraction)Z"
    }
}
