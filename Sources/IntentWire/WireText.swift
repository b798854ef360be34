/// Renders the text frames of CIP (intent types, worker names, command words) for error messages and logs; they are
/// checked with `JSONText.isValidUTF8`.
public enum WireText {
    /// `bytes` as text for an error message or a log: invalid UTF-8 repaired, and cut to `limit` bytes (then
    /// followed by "...") so that a huge frame does not make a huge error body.
    public static func display(_ bytes: UnsafeRawBufferPointer, limit: Int = 64) -> String {
        if bytes.count <= limit { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<limit]), as: UTF8.self) + "..."
    }
}
