/// An error loading an intent definition file.
public struct IntentDefinitionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text.
        public let rawValue: String

        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file is not valid JSON.
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// The JSON does not have the shape of a definition (a missing or mistyped key, an unknown key).
        public static let invalidShape = Code(rawValue: "invalid-shape")
        /// The definition is inconsistent (an unknown type, an undefined enumeration, a duplicate name).
        public static let inconsistent = Code(rawValue: "inconsistent")

        public var description: String { rawValue }
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// A human-readable explanation naming the key or parameter.
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
