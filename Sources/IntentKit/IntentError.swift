public import ConciergeJSON
public import IntentVocabulary

/// An error of the job runner, sent as the body of an ``JobOutcome/error`` outcome: `{"code": ..., "message": ...}`.
///
/// The codes are the stable error codes of the protocol (`Docs/DESIGN.md`).
public struct IntentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code: the protocol's one set of error codes (`bad-body`, `unknown-intent`,
    /// `handler-failed`, `unknown-parameter`, `invalid-type`, `out-of-range`, `invalid-enum`, ...).
    public typealias Code = WireErrorCode

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
        var object: JSONObject = ["code": .string(code.rawValue), "message": .string(message)]
        if let intent { object["intent"] = .string(intent) }
        if let parameter { object["parameter"] = .string(parameter) }
        return .object(object)
    }

    /// A bound as written in definition files: integral values without a fraction.
    static func format(_ bound: Double) -> String {
        bound == bound.rounded() && abs(bound) < 1e15 ? String(Int64(bound)) : String(bound)
    }
}
