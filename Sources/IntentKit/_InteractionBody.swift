import ConciergeJSON

/// A job's Interaction body as the job runner gets it: parsed, plus the raw bytes, so the output can copy the
/// input through (``JSONValue/appendingMember(_:to:writeValue:)``) instead of serializing it again.
struct _InteractionBody: Sendable {
    /// The body as sent.
    let bytes: [UInt8]
    /// Its members.
    let members: JSONObject
    /// Where the value of `"intent"` lies in ``bytes``.
    let intentRange: Range<Int>?

    /// The body with `key` added as its last member (`writeValue` writes the value, for which `valueCapacity`
    /// bytes are reserved); nil when the body already has `key` (the caller then serializes the whole output).
    func appending(_ key: String, valueCapacity: Int = 256, writeValue: (inout [UInt8]) -> Void) -> [UInt8]? {
        guard members[key] == nil else { return nil }
        return JSONValue.appendingMember(key, to: bytes, valueCapacity: valueCapacity, writeValue: writeValue)
    }

    /// The body with `"intent"` replaced (serialized anew; for the rare bodies that must change).
    func replacingIntent(_ intent: JSONValue) -> _InteractionBody {
        var members = members
        members["intent"] = intent
        let bytes = JSONValue.object(members).serialized()
        let range = try? JSONValue.parse(bytes, locatingMember: "intent").memberRange
        return _InteractionBody(bytes: bytes, members: members, intentRange: range ?? nil)
    }
}
