public import ConciergeJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#elseif canImport(Foundation)
    import Foundation
#endif

extension IntentDefinition {
    /// Checks an intent (the `"intent"` object of a body: `type`, `parameters`, optional `identifier`) against this
    /// definition as a worker serving it would (PROTOCOL.md section 5.11, steps 3, 4 and 4b), without its Swift type:
    /// for clients that hold only the definition (`concierge send --check`, the served definition read from the
    /// broker).
    ///
    /// - Parameter phase: with `confirm` or `handle`, a missing required parameter is `missing-parameter`; with
    ///   `resolve` or `lifecycle` it is not an error (a resolve asks for it).
    /// - Throws: ``IntentError`` with the code a worker would answer: `bad-body`, `unknown-parameter`,
    ///   `invalid-type`, `out-of-range`, `invalid-enum` or `missing-parameter`.
    public func check(intent json: JSONValue, phase: IntentPhase = .lifecycle) throws(IntentError) {
        guard case .object(let object) = json else {
            throw IntentError(code: .badBody, message: "\"intent\" must be an object, got \(json._kindName)")
        }
        for key in object.keys where !["type", "identifier", "parameters"].contains(key) {
            throw IntentError(code: .badBody, message: "unknown key \"\(key)\" in \"intent\"")
        }
        guard case .string(let type)? = object["type"] else {
            throw IntentError(code: .badBody, message: "\"intent\" has no string \"type\"")
        }
        guard type == intent else {
            throw IntentError(code: .badBody, message: "intent type \"\(type)\" is not \"\(intent)\"")
        }
        let values: JSONObject
        switch object["parameters"] {
        case nil, .null?: values = [:]
        case .object(let parameters)?: values = parameters
        case let other?:
            throw IntentError(code: .badBody, message: "\"parameters\" must be an object, got \(other._kindName)")
        }
        let names = parameters.map(\.name)
        if let unknown = values.keys.filter({ !names.contains($0) }).sorted().first {
            throw IntentError(
                code: .unknownParameter, message: "\(intent) declares no parameter \"\(unknown)\"", parameter: unknown,
                intent: intent)
        }
        for parameter in parameters {
            guard let value = values[parameter.name], value != .null else {
                if parameter.required, phase == .confirm || phase == .handle {
                    throw IntentError(
                        code: .missingParameter,
                        message: "\(intent) requires \"\(parameter.name)\", which the intent does not have",
                        parameter: parameter.name, intent: intent)
                }
                continue
            }
            guard let type = parameterType(of: parameter) else { continue }
            let elements: [JSONValue]
            if parameter.list {
                guard case .array(let array) = value else {
                    throw invalid(parameter, "expected a list of \(type.elementType), got \(value._kindName)")
                }
                elements = array
            } else {
                elements = [value]
            }
            for element in elements {
                try checkElement(element, of: type.elementType, parameter: parameter)
            }
        }
    }

    private func checkElement(_ value: JSONValue, of type: ParameterType, parameter: Parameter) throws(IntentError) {
        do {
            switch type {
            case .string: _ = try String(intentJSON: value)
            case .integer: _ = try Int(intentJSON: value)
            case .double: _ = try Double(intentJSON: value)
            case .boolean: _ = try Bool(intentJSON: value)
            case .date: _ = try Date(intentJSON: value)
            case .dateComponents: _ = try IntentDateComponents(intentJSON: value)
            case .currencyAmount: _ = try CurrencyAmount(intentJSON: value)
            case .person: _ = try Person(intentJSON: value)
            case .placemark: _ = try Placemark(intentJSON: value)
            case .enumeration(let name, let cases):
                guard case .string(let text) = value else {
                    throw IntentValueError.typeMismatch(expected: "a case of \(name)", got: value)
                }
                guard cases.contains(text) else {
                    throw IntentError(
                        code: .invalidEnum,
                        message:
                            "\"\(parameter.name)\" must be one of \(cases.joined(separator: ", ")), got \"\(text)\"",
                        parameter: parameter.name, intent: intent)
                }
            case .list:
                throw IntentValueError(code: .invalidValue, message: "lists of lists are not parameter values")
            }
        } catch let error as IntentError {
            throw error
        } catch let error as IntentValueError {
            throw invalid(parameter, error.message)
        } catch {
            throw invalid(parameter, "\(error)")
        }
        if let number = value.doubleValue {
            if let minimum = parameter.minimum, number < minimum {
                throw IntentError(
                    code: .outOfRange,
                    message:
                        "\"\(parameter.name)\" must be at least \(IntentError.format(minimum)), got \(Self.number(value))",
                    parameter: parameter.name, intent: intent)
            }
            if let maximum = parameter.maximum, number > maximum {
                throw IntentError(
                    code: .outOfRange,
                    message:
                        "\"\(parameter.name)\" must be at most \(IntentError.format(maximum)), got \(Self.number(value))",
                    parameter: parameter.name, intent: intent)
            }
        }
    }

    /// A number as a person reads it: an integral one without a fraction (`400`, also for `400.0`), another as a
    /// decimal (`2.5`).
    static func number(_ value: JSONValue) -> String {
        switch value {
        case .int(let integer): String(integer)
        case .double(let number): IntentError.format(number)
        default: value.serializedString()
        }
    }

    private func invalid(_ parameter: Parameter, _ message: String) -> IntentError {
        IntentError(
            code: .invalidType, message: "\"\(parameter.name)\" of \(intent): \(message)", parameter: parameter.name,
            intent: intent)
    }
}
