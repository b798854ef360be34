public import ConciergeJSON

/// The resolution of one parameter (SiriKit's `INIntentResolutionResult` subclasses), typed by the parameter's value.
///
/// JSON: `{"kind": ..., "value"?: v, "options"?: [v], "reason"?: s}`.
public enum ResolutionResult<Value: IntentParameterValue>: Sendable, Hashable {
    /// The value can be used; it is written back into the intent returned to the caller.
    case success(Value)
    /// The handler does not need this parameter.
    case notRequired
    /// The handler needs a value and there is none.
    case needsValue
    /// Several values match equally well; the user chooses one of these options.
    case disambiguation([Value])
    /// The handler chose this value but the user should confirm it; it is written back into the intent.
    case confirmationRequired(Value)
    /// The value cannot be used; `reason` says why (stable words such as `outsideServiceArea`).
    case unsupported(reason: String? = nil)

    /// An unsupported resolution whose reason is a typed value, e.g. `.unsupported(Reason.outsideServiceArea)`.
    public static func unsupported(_ reason: some RawRepresentable<String>) -> ResolutionResult {
        .unsupported(reason: reason.rawValue)
    }

    /// The default resolution of a parameter the handler leaves alone: `success(value)` if there is a value,
    /// else `notRequired`.
    public static func `default`(for value: Value?) -> ResolutionResult {
        if let value { return .success(value) }
        return .notRequired
    }

    /// The kind of resolution.
    public var kind: ResolutionKind {
        switch self {
        case .success: .success
        case .notRequired: .notRequired
        case .needsValue: .needsValue
        case .disambiguation: .disambiguation
        case .confirmationRequired: .confirmationRequired
        case .unsupported: .unsupported
        }
    }

    /// The value that is written back into the intent: the value of `success` and `confirmationRequired`.
    public var resolvedValue: Value? {
        switch self {
        case .success(let value), .confirmationRequired(let value): value
        default: nil
        }
    }

    /// The resolution's JSON form.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["kind": .string(kind.rawValue)]
        switch self {
        case .success(let value), .confirmationRequired(let value): object["value"] = value.intentJSON
        case .disambiguation(let options): object["options"] = .array(options.map(\.intentJSON))
        case .unsupported(let reason?): object["reason"] = .string(reason)
        case .notRequired, .needsValue, .unsupported(nil): break
        }
        return .object(object)
    }

    /// Decodes a resolution from its JSON form (for clients and tests).
    /// - Throws: ``IntentValueError`` when the JSON is not a resolution of this value type.
    public init(jsonValue json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "resolution object")
        let kindText = try reader.requiredString("kind")
        guard let kind = ResolutionKind(rawValue: kindText) else {
            throw IntentValueError(code: .invalidValue, message: "kind: unknown resolution kind \"\(kindText)\"")
        }
        switch kind {
        case .success, .confirmationRequired:
            guard let valueJSON = reader.optional("value") else {
                throw IntentValueError(code: .missingKey, message: "missing \"value\"")
            }
            let value: Value
            do { value = try Value(intentJSON: valueJSON) } catch { throw error.prefixed(with: "value") }
            self = kind == .success ? .success(value) : .confirmationRequired(value)
            try reader.finish(known: ["kind", "value"])
        case .disambiguation:
            guard let optionsJSON = reader.optional("options") else {
                throw IntentValueError(code: .missingKey, message: "missing \"options\"")
            }
            guard case .array(let elements) = optionsJSON else {
                throw IntentValueError.typeMismatch(expected: "array", got: optionsJSON).prefixed(with: "options")
            }
            var options: [Value] = []
            for (index, element) in elements.enumerated() {
                do { options.append(try Value(intentJSON: element)) } catch {
                    throw error.prefixed(with: "options[\(index)]")
                }
            }
            self = .disambiguation(options)
            try reader.finish(known: ["kind", "options"])
        case .unsupported:
            self = .unsupported(reason: try reader.optionalString("reason"))
            try reader.finish(known: ["kind", "reason"])
        case .notRequired:
            self = .notRequired
            try reader.finish(known: ["kind"])
        case .needsValue:
            self = .needsValue
            try reader.finish(known: ["kind"])
        }
    }
}
