public import ConciergeJSON

extension Intent {
    /// Decodes an intent from its JSON form `{"type": ..., "identifier"?: ..., "parameters": {name: value}}`.
    ///
    /// Validates that `type` is ``Intent/intentType``, that every parameter name is declared and that every value
    /// has the declared type. A missing (or `null`) parameter is `nil`, not an error; a missing `parameters` object
    /// means no parameters.
    /// - Throws: ``IntentError`` with code ``IntentError/Code/badBody`` whose message names the offending parameter.
    public init(jsonValue: JSONValue) throws(IntentError) {
        guard case .object(let object) = jsonValue else {
            throw IntentError(code: .badBody, message: "\"intent\" must be an object, got \(jsonValue._kindName)")
        }
        for key in object.keys where key != "type" && key != "identifier" && key != "parameters" {
            throw IntentError(code: .badBody, message: "unknown key \"\(key)\" in \"intent\"")
        }
        guard case .string(let type)? = object["type"] else {
            throw IntentError(code: .badBody, message: "\"intent\" has no string \"type\"")
        }
        guard type == Self.intentType else {
            throw IntentError(
                code: .badBody,
                message: "intent type \"\(type)\" does not match the job's intent type \"\(Self.intentType)\""
            )
        }
        self.init()
        switch object["identifier"] {
        case nil, .null?: break
        case .string(let identifier)?: self.identifier = identifier
        case let other?:
            throw IntentError(code: .badBody, message: "\"identifier\" must be a string, got \(other._kindName)")
        }
        let values: [String: JSONValue]
        switch object["parameters"] {
        case nil, .null?: values = [:]
        case .object(let parameters)?: values = parameters
        case let other?:
            throw IntentError(code: .badBody, message: "\"parameters\" must be an object, got \(other._kindName)")
        }
        var matched = 0
        for parameter in Self.parameters {
            guard let value = values[parameter.name] else { continue }
            matched += 1
            do {
                try parameter.setValue(value, in: &self)
            } catch {
                throw IntentError(
                    code: .badBody,
                    message: "parameter \"\(parameter.name)\" (\(parameter.type)): \(error.message)",
                    parameter: parameter.name
                )
            }
        }
        if matched < values.count {
            let declared = Self.parameters.map(\.name)
            let unknown = values.keys.filter { !declared.contains($0) }.sorted()
            throw IntentError(
                code: .badBody,
                message: "unknown parameter \"\(unknown.first ?? "?")\" for intent \(Self.intentType)",
                parameter: unknown.first
            )
        }
    }

    /// The intent's JSON form; `nil` parameters are left out.
    public var jsonValue: JSONValue {
        var parameters: [String: JSONValue] = [:]
        for parameter in Self.parameters {
            if let value = parameter.value(in: self) { parameters[parameter.name] = value }
        }
        var object: [String: JSONValue] = ["type": .string(Self.intentType), "parameters": .object(parameters)]
        if let identifier { object["identifier"] = .string(identifier) }
        return .object(object)
    }
}
