extension JSONValue {
    /// Parses one JSON document as ``parse(_:maxDepth:)-([UInt8],_)`` does, and also finds where the value of the
    /// top-level member `key` lies in `bytes`, so a caller can copy that member through without serializing it
    /// again.
    ///
    /// - Returns: The value, and the byte range of member `key`'s value (of its last occurrence, the one parsing
    ///   keeps); nil when the document is not an object or has no such member.
    /// - Throws: ``JSONError`` as ``parse(_:maxDepth:)-([UInt8],_)`` does.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64, locatingMember key: String) throws(JSONError) -> (
        value: JSONValue, memberRange: Range<Int>?
    ) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> (value: JSONValue, memberRange: Range<Int>?) in
                try parseLocating(raw, maxDepth: maxDepth, member: key)
            }
        }
        return try result.get()
    }

    /// `document`, the bytes of a well-formed JSON object that has no member `key`, with `"key": value` added as
    /// its last member, where `writeValue` appends the value's JSON text. The other members are copied through
    /// byte for byte (their order and spelling kept), so answering a message costs one copy instead of a
    /// re-serialization.
    ///
    /// - Parameters:
    ///   - key: The member's key.
    ///   - document: The JSON object to copy.
    ///   - valueCapacity: How many bytes to reserve for the value (a hint: a larger value still fits, after the
    ///     buffer grows).
    ///   - writeValue: Appends the value's JSON text to the buffer it is given.
    /// - Returns: The new document; nil when `document` does not end in `}` (after trailing whitespace).
    public static func appendingMember(
        _ key: String,
        to document: [UInt8],
        valueCapacity: Int = 256,
        writeValue: (inout [UInt8]) -> Void
    ) -> [UInt8]? {
        var end = document.count
        while end > 0, JSONWriter.isWhitespace(document[end - 1]) { end -= 1 }
        guard end > 0, document[end - 1] == UInt8(ascii: "}") else { return nil }
        var before = end - 1
        while before > 0, JSONWriter.isWhitespace(document[before - 1]) { before -= 1 }
        guard before > 0 else { return nil }
        let isEmpty = document[before - 1] == UInt8(ascii: "{")
        var output: [UInt8] = []
        output.reserveCapacity(end + key.utf8.count + 4 + max(0, valueCapacity))
        output.append(contentsOf: document[..<before])
        if !isEmpty { output.append(UInt8(ascii: ",")) }
        JSONText.appendString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        writeValue(&output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
