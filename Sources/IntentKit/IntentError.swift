public import ConciergeJSON

/// An error of the job runner, sent as the body of an ``JobOutcome/error`` outcome: `{"code": ..., "message": ...}`.
///
/// The codes are the stable error codes of the protocol (`Docs/DESIGN.md`).
public struct IntentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code on the wire, e.g. `bad-body`.
        public let rawValue: String

        /// Creates a code from its wire form.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The body could not be decoded: invalid JSON, wrong shape, or a type mismatch with the intent definition.
        public static let badBody = Code(rawValue: "bad-body")
        /// No handler is registered for the intent type.
        public static let unknownIntent = Code(rawValue: "unknown-intent")
        /// The handler's resolve threw (or set a resolution for an undeclared parameter).
        public static let handlerFailed = Code(rawValue: "handler-failed")
        /// The intent has a parameter its definition does not declare.
        public static let unknownParameter = Code(rawValue: "unknown-parameter")
        /// A parameter's value does not have the declared type (wrong JSON type, or a malformed value of it).
        public static let invalidType = Code(rawValue: "invalid-type")
        /// A numeric parameter's value is outside the definition's `minimum`...`maximum`.
        public static let outOfRange = Code(rawValue: "out-of-range")
        /// An enumeration parameter's value is not one of its cases.
        public static let invalidEnum = Code(rawValue: "invalid-enum")

        public var description: String { rawValue }
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// A human-readable message; for ``Code/badBody`` it names the offending parameter or key.
    public let message: String
    /// The parameter the error is about, when there is one.
    public let parameter: String?
    /// The intent type the error is about, when there is one.
    public let intent: String?

    /// Creates an error.
    public init(code: Code, message: String, parameter: String? = nil, intent: String? = nil) {
        self.code = code
        self.message = message
        self.parameter = parameter
        self.intent = intent
    }

    public var description: String { "\(code): \(message)" }

    /// The error body: `{"code": ..., "message": ..., "intent"?: ..., "parameter"?: ...}`.
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if let intent { object["intent"] = .string(intent) }
        if let parameter { object["parameter"] = .string(parameter) }
        return .object(object)
    }

    /// A bound as written in definition files: integral values without a fraction.
    static func format(_ bound: Double) -> String {
        bound == bound.rounded() && abs(bound) < 1e15 ? String(Int64(bound)) : String(bound)
    }
}
