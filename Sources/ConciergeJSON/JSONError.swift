/// The error thrown when a byte sequence is not a valid JSON document.
///
/// `code` is a stable, machine-readable classification (its `description` is a kebab-case string such as
/// `"invalid-utf8"` that is safe to put on the wire or in logs); `offset` is the zero-based byte offset in
/// the input at which the problem was detected.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable classification of a JSON parse failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable string form of the code, e.g. `"invalid-utf8"`.
        public let rawValue: String

        /// Creates a code from its stable string form.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The input ended before the document was complete (unterminated string, array, object,
        /// literal or escape; empty or whitespace-only input). `offset` is the input length.
        public static let unexpectedEnd = Code(rawValue: "unexpected-end")
        /// A byte that cannot start or continue the expected token (e.g. `+1`, `.5`, `NaN`, a missing
        /// comma or colon, a trailing comma, a non-string object key).
        public static let unexpectedCharacter = Code(rawValue: "unexpected-character")
        /// A malformed number (leading zeros, `1.`, `1e`, `-` without digits) or one whose magnitude is
        /// outside the finite `Double` range (e.g. `1e400`). `offset` points at the offending byte.
        public static let invalidNumber = Code(rawValue: "invalid-number")
        /// A string containing an unescaped control character (a byte below 0x20).
        public static let invalidString = Code(rawValue: "invalid-string")
        /// A string containing bytes that are not well-formed UTF-8 (overlong forms, encoded surrogates,
        /// code points above U+10FFFF, stray continuation bytes, truncated sequences).
        /// `offset` points at the first byte of the bad sequence.
        public static let invalidUTF8 = Code(rawValue: "invalid-utf8")
        /// An unknown escape (`\x`), a `\u` escape without four hex digits, or a lone or mis-paired
        /// UTF-16 surrogate escape. `offset` points at the backslash.
        public static let invalidEscape = Code(rawValue: "invalid-escape")
        /// Arrays/objects nested deeper than the `maxDepth` passed to `parse`. `offset` points at the
        /// opening bracket that exceeded the limit.
        public static let tooDeep = Code(rawValue: "too-deep")
        /// Non-whitespace bytes after a complete top-level value.
        public static let trailingData = Code(rawValue: "trailing-data")

        /// The stable string form of the code (same as ``rawValue``).
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// Zero-based byte offset in the input where the problem was found.
    public let offset: Int

    /// Creates an error with the given code and byte offset.
    public init(code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// A human-readable summary, e.g. `"invalid-utf8 at byte offset 12"`.
    public var description: String {
        "\(code.rawValue) at byte offset \(offset)"
    }
}
