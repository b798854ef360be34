/// One thing wrong with an intent definition file: where (the file, and the JSON path inside it) and what.
///
/// ``description`` has the form compilers use, which SwiftPM and Xcode show against the file:
/// `Intents/Echo.intent.json: error: parameters[2].type: unknown type "colour"` (with `:line:column` after the
/// file for invalid JSON, where the position is known).
public struct DefinitionDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible code for what is wrong.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text.
        public let rawValue: String

        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file is not valid JSON (or cannot be read).
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// A required key is missing.
        public static let missingKey = Code(rawValue: "missing-key")
        /// A key the format does not define.
        public static let unknownKey = Code(rawValue: "unknown-key")
        /// A value of the wrong JSON type.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A `type` that is not one of the parameter types.
        public static let unknownType = Code(rawValue: "unknown-type")
        /// A name that is not an identifier (`[A-Za-z_][A-Za-z0-9_]*`).
        public static let invalidIdentifier = Code(rawValue: "invalid-identifier")
        /// A name that appears twice where names must be unique (parameters, cases, reasons, codes).
        public static let duplicateName = Code(rawValue: "duplicate-name")
        /// A name the generated Swift needs for itself (e.g. a parameter called `identifier`).
        public static let reservedName = Code(rawValue: "reserved-name")
        /// `enum` missing, naming no entry of `enums`, or given for a type other than `enum`.
        public static let undefinedEnum = Code(rawValue: "undefined-enum")
        /// An entry of `enums` that no parameter uses, or one without cases.
        public static let badEnum = Code(rawValue: "bad-enum")
        /// `minimum`/`maximum` on a non-numeric parameter, or `minimum` greater than `maximum`.
        public static let badBounds = Code(rawValue: "bad-bounds")
        /// `confirmCodes` or `handleCodes` lacks a standard code.
        public static let missingStandardCode = Code(rawValue: "missing-standard-code")
        /// The file's name does not match its `intent`.
        public static let fileName = Code(rawValue: "file-name")
        /// Two definition files of one target disagree (an enumeration declared twice with other cases, two files
        /// for one intent type).
        public static let conflict = Code(rawValue: "conflict")

        public var description: String { rawValue }
    }

    /// What is wrong, as a stable code.
    public let code: Code
    /// The definition file, as given to the generator.
    public let file: String
    /// The JSON path inside the file, e.g. `parameters[2].type`; empty for the file as a whole.
    public let path: String
    /// What is wrong, for a person.
    public let message: String
    /// The 1-based line and column, when known (invalid JSON).
    public let position: (line: Int, column: Int)?

    /// Creates a diagnostic.
    public init(code: Code, file: String, path: String, message: String, position: (line: Int, column: Int)? = nil) {
        self.code = code
        self.file = file
        self.path = path
        self.message = message
        self.position = position
    }

    /// `file[:line:column]: error: [path: ]message`.
    public var description: String {
        let location = position.map { "\(file):\($0.line):\($0.column)" } ?? file
        return "\(location): error: \(path.isEmpty ? "" : "\(path): ")\(message)"
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.file == rhs.file && lhs.path == rhs.path && lhs.message == rhs.message
            && lhs.position?.line == rhs.position?.line && lhs.position?.column == rhs.position?.column
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(file)
        hasher.combine(path)
        hasher.combine(message)
        hasher.combine(position?.line)
        hasher.combine(position?.column)
    }
}
