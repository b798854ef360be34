public import ConciergeJSON

extension Intent {
    /// Decodes an intent from its JSON form `{"type": ..., "identifier"?: ..., "parameters": {name: value}}`.
    ///
    /// Validates that `type` is ``Intent/intentType``, that every parameter name is declared and that every value
    /// has the declared type. A missing (or `null`) parameter is `nil`, not an error; a missing `parameters` object
    /// means no parameters.
    /// - Throws: ``IntentError`` with code ``IntentError/Code/badBody`` whose message names the offending parameter.
    public init(jsonValue: JSONValue) throws(IntentError) {
        try self.init(jsonValue: jsonValue, parameterNames: Self.parameters.map(\.name))
    }

    /// ``init(jsonValue:)`` with the names of ``Intent/parameters``, in order, computed once by the caller (the job
    /// runner, once per registered handler): matching a body's parameters then reads no generic parameter list.
    init(jsonValue: JSONValue, parameterNames names: [String]) throws(IntentError) {
        guard case .object(let object) = jsonValue else {
            throw IntentError(code: .badBody, message: "\"intent\" must be an object, got \(jsonValue._kindName)")
        }
        // One pass over the members (no hashing): an intent has three keys at most.
        var typeValue: JSONValue?
        var identifierValue: JSONValue?
        var parametersValue: JSONValue?
        for (key, value) in object {
            switch key {
            case "type": typeValue = value
            case "identifier": identifierValue = value
            case "parameters": parametersValue = value
            default: throw IntentError(code: .badBody, message: "unknown key \"\(key)\" in \"intent\"")
            }
        }
        guard case .string(let type)? = typeValue else {
            throw IntentError(code: .badBody, message: "\"intent\" has no string \"type\"")
        }
        guard type == Self.intentType else {
            throw IntentError(
                code: .badBody,
                message: "intent type \"\(type)\" does not match the job's intent type \"\(Self.intentType)\""
            )
        }
        self.init()
        switch identifierValue {
        case nil, .null?: break
        case .string(let identifier)?: self.identifier = identifier
        case let other?:
            throw IntentError(code: .badBody, message: "\"identifier\" must be a string, got \(other._kindName)")
        }
        let values: JSONObject
        switch parametersValue {
        case nil, .null?: values = [:]
        case .object(let parameters)?: values = parameters
        case let other?:
            throw IntentError(code: .badBody, message: "\"parameters\" must be an object, got \(other._kindName)")
        }
        // Unknown parameters first (PROTOCOL.md 5.11). Names are compared rather than hashed: keys are unique, so a
        // body whose every key is declared has at most as many values as there are declared parameters, and matching
        // costs at most (declared parameters)² string comparisons. Only a body with an unknown one pays for finding
        // its name.
        for (key, _) in values where !names.contains(key) {
            let unknown = values.keys.filter { !names.contains($0) }.sorted().first ?? key
            throw IntentError(
                code: .unknownParameter,
                message: "\(Self.intentType) has no parameter \"\(unknown)\"",
                parameter: unknown,
                intent: Self.intentType
            )
        }
        guard !values.isEmpty else { return }
        let parameters = Self.parameters
        for index in 0..<names.count {
            guard let value = Self.value(named: names[index], in: values) else { continue }
            let parameter = parameters[index]
            do {
                try parameter.setValue(value, in: &self)
            } catch {
                throw IntentError(
                    code: parameter.type.isEnumeration && error.code == .invalidValue ? .invalidEnum : .invalidType,
                    message: "\(Self.intentType).\(parameter.name) (\(parameter.type)): \(error.message)",
                    parameter: parameter.name,
                    intent: Self.intentType
                )
            }
            if let problem = Self.rangeProblem(value, minimum: parameter.minimum, maximum: parameter.maximum) {
                throw IntentError(
                    code: .outOfRange,
                    message: "\(Self.intentType).\(parameter.name): \(problem)",
                    parameter: parameter.name,
                    intent: Self.intentType
                )
            }
        }
    }

    /// The value of member `name` of `values`, found by comparing keys (a body carries few parameters).
    private static func value(named name: String, in values: JSONObject) -> JSONValue? {
        for (key, value) in values where key == name { return value }
        return nil
    }

    /// Why a numeric value (or a list of them) lies outside `minimum`...`maximum`; nil when it does not.
    private static func rangeProblem(_ value: JSONValue, minimum: Double?, maximum: Double?) -> String? {
        guard minimum != nil || maximum != nil else { return nil }
        switch value {
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let problem = rangeProblem(element, minimum: minimum, maximum: maximum) {
                    return "[\(index)]: \(problem)"
                }
            }
            return nil
        case .int, .double:
            guard let number = value.doubleValue else { return nil }
            if let minimum, number < minimum { return "\(value) is below the minimum \(IntentError.format(minimum))" }
            if let maximum, number > maximum { return "\(value) is above the maximum \(IntentError.format(maximum))" }
            return nil
        default:
            return nil
        }
    }

    /// The intent's JSON form; `nil` parameters are left out.
    public var jsonValue: JSONValue {
        var parameters: JSONObject = [:]
        for parameter in Self.parameters {
            if let value = parameter.value(in: self) { parameters[parameter.name] = value }
        }
        var object: JSONObject = ["type": .string(Self.intentType), "parameters": .object(parameters)]
        if let identifier { object["identifier"] = .string(identifier) }
        return .object(object)
    }
}
