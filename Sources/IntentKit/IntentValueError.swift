public import ConciergeJSON

/// An error converting a parameter value from its JSON encoding: the JSON has the wrong shape for the value's type.
///
/// The ``message`` says what was expected and where (for nested values, a path such as `displayName` or `[2]`).
/// ``Code`` is stable; new codes may be added.
public struct IntentValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text, e.g. `type-mismatch`.
        public let rawValue: String

        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The JSON value has the wrong JSON type (e.g. a string where an integer is expected).
        public static let typeMismatch = Code(rawValue: "type-mismatch")
        /// The JSON type is right but the value is not acceptable (e.g. an unknown enum case, a malformed date).
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// An object value has a key its type does not define.
        public static let unknownKey = Code(rawValue: "unknown-key")
        /// An object value lacks a key its type requires.
        public static let missingKey = Code(rawValue: "missing-key")

        public var description: String { rawValue }
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// A human-readable explanation naming the expected type and, for nested values, the path.
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// A type mismatch: `expected <what>, got <JSON type>`.
    public static func typeMismatch(expected: String, got value: JSONValue) -> IntentValueError {
        IntentValueError(code: .typeMismatch, message: "expected \(expected), got \(value._kindName)")
    }

    /// The same error with `path` prepended to its message (`path: message`), for errors in nested values.
    public func prefixed(with path: String) -> IntentValueError {
        IntentValueError(code: code, message: "\(path): \(message)")
    }
}
