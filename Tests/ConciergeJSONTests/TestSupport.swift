import ConciergeJSON

/// The error thrown when parsing `bytes`, or `nil` if parsing succeeds.
func parseError(_ bytes: [UInt8], maxDepth: Int = 64) -> JSONError? {
    do {
        _ = try JSONValue.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// The error thrown when parsing `text`, or `nil` if parsing succeeds.
func parseError(_ text: String, maxDepth: Int = 64) -> JSONError? {
    parseError(Array(text.utf8), maxDepth: maxDepth)
}

/// `bytes` wrapped in double quotes, for building string tokens with arbitrary (possibly invalid) content.
func quoted(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
}

/// Parses `text`, serializes the result and parses that again.
func reparsed(_ value: JSONValue) throws -> JSONValue {
    try JSONValue.parse(value.serialized())
}
