/// Why a transcript line, file or directory could not be read or written.
///
/// `code` is stable (its `description` is a kebab-case word safe for logs and scripts); `line` is the 1-based line
/// of the file the problem is on, when there is one.
public struct TranscriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable classification of a transcript problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable string form of the code, e.g. `"missing-field"`.
        public let rawValue: String

        /// Creates a code from its stable string form.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The line is not one JSON document (the message gives the JSON error and its byte offset).
        public static let notJSON = Code(rawValue: "not-json")
        /// The line is JSON but not an object.
        public static let notObject = Code(rawValue: "not-object")
        /// `"record"` is missing or names no record kind (`start`, `turn`, `phase`, `reply`, `end`).
        public static let unknownRecord = Code(rawValue: "unknown-record")
        /// A required key of the record is missing.
        public static let missingField = Code(rawValue: "missing-field")
        /// A key has a value of the wrong JSON type.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A key has a value of the right type that the format does not allow (an unknown outcome, a turn of 0, an
        /// unsupported version, a timestamp not in UTC ISO 8601 with milliseconds).
        public static let badValue = Code(rawValue: "bad-value")
        /// The records are not in a conversation's order: the first is not `start`, a second `start`, or anything
        /// after `end`.
        public static let outOfOrder = Code(rawValue: "out-of-order")
        /// The file is empty (no records at all).
        public static let empty = Code(rawValue: "empty")
        /// The file or directory could not be opened, read, created or written (the message gives `errno`'s text).
        public static let io = Code(rawValue: "io")
        /// The writer has no open transcript for this conversation (never begun, or finished already).
        public static let notOpen = Code(rawValue: "not-open")
        /// The writer has a transcript open for this conversation already (begun twice without a finish).
        public static let alreadyOpen = Code(rawValue: "already-open")

        /// The stable string form of the code (same as ``rawValue``).
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// What, in words.
    public let message: String
    /// The 1-based line of the file, when the problem is on one.
    public let line: Int?
    /// The file, when there is one.
    public let path: String?

    /// Creates an error.
    public init(code: Code, message: String, line: Int? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.path = path
    }

    /// The error located at `line` of `path` (the reader adds where; the record decoder knows only what).
    func at(line: Int?, path: String?) -> TranscriptError {
        TranscriptError(code: code, message: message, line: line ?? self.line, path: path ?? self.path)
    }

    /// `path:line: code: message`, leaving out what is not known.
    public var description: String {
        var place = ""
        if let path { place += path + ":" }
        if let line { place += "\(line):" }
        return (place.isEmpty ? "" : place + " ") + "\(code.rawValue): \(message)"
    }
}
