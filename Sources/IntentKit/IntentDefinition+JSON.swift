public import ConciergeJSON

extension IntentDefinition {
    /// Loads a definition from the bytes of a definition file.
    /// - Throws: ``IntentDefinitionError`` for invalid JSON, a wrong shape or an inconsistent definition.
    public init(jsonBytes: [UInt8]) throws(IntentDefinitionError) {
        let json: JSONValue
        do { json = try JSONValue.parse(jsonBytes) } catch {
            throw IntentDefinitionError(
                code: .invalidJSON,
                message: "not valid JSON (\(error.code) at byte \(error.offset))"
            )
        }
        try self.init(jsonValue: json)
    }

    /// Loads a definition from its JSON form, strictly: unknown keys, mistyped values, unknown type names,
    /// undefined or unused enumerations and duplicate parameter names are errors.
    /// - Throws: ``IntentDefinitionError``.
    public init(jsonValue json: JSONValue) throws(IntentDefinitionError) {
        var top = try _Fields(json, at: "definition")
        let intent = try top.string("intent")
        let description = try top.string("description", default: "")
        let parameterValues = try top.array("parameters")
        var enums: [String: [String]] = [:]
        if let enumsValue = top.take("enums") {
            guard case .object(let object) = enumsValue else { throw _Fields.shape("\"enums\" must be an object") }
            for (name, casesValue) in object {
                enums[name] = try _Fields.strings(casesValue, at: "enums.\(name)")
            }
        }
        let confirmCodes = try _Fields.strings(top.require("confirmCodes"), at: "confirmCodes")
        let handleCodes = try _Fields.strings(top.require("handleCodes"), at: "handleCodes")
        var version = 1
        if let versionValue = top.take("version") {
            guard let number = versionValue.intValue, number >= 1 else {
                throw _Fields.shape("\"version\" must be a whole number from 1")
            }
            version = number
        }
        var maxAsks: Int?
        if let value = top.take("maxAsks") {
            guard let number = value.intValue, (1...100).contains(number) else {
                throw _Fields.shape("\"maxAsks\" must be a whole number from 1 to 100")
            }
            maxAsks = number
        }
        try top.finish()

        var parameters: [Parameter] = []
        for (index, value) in parameterValues.enumerated() {
            var fields = try _Fields(value, at: "parameters[\(index)]")
            let parameter = Parameter(
                name: try fields.string("name"),
                type: try fields.string("type"),
                list: try fields.bool("list"),
                required: try fields.bool("required"),
                description: try fields.string("description", default: ""),
                minimum: try fields.number("minimum"),
                maximum: try fields.number("maximum"),
                enumName: try fields.optionalString("enum"),
                unsupportedReasons: try fields.take("unsupportedReasons").map { value throws(IntentDefinitionError) in
                    try _Fields.strings(value, at: "parameters[\(index)].unsupportedReasons")
                }
            )
            try fields.finish()
            parameters.append(parameter)
        }
        self.init(
            intent: intent,
            description: description,
            parameters: parameters,
            enums: enums,
            confirmCodes: confirmCodes,
            handleCodes: handleCodes
        )
        self.version = version
        self.maxAsks = maxAsks
        try validate()
    }

    /// Checks that the definition is consistent: known type names, enumerations defined (and used), unique names.
    /// - Throws: ``IntentDefinitionError`` with code ``IntentDefinitionError/Code/inconsistent``.
    public func validate() throws(IntentDefinitionError) {
        func fail(_ message: String) -> IntentDefinitionError {
            IntentDefinitionError(code: .inconsistent, message: "\(intent): \(message)")
        }
        var names: Set<String> = []
        var usedEnums: Set<String> = []
        for parameter in parameters {
            guard names.insert(parameter.name).inserted else {
                throw fail("parameter \"\(parameter.name)\" appears twice")
            }
            guard ParameterType.typeNames.contains(parameter.type) else {
                throw fail("parameter \"\(parameter.name)\" has unknown type \"\(parameter.type)\"")
            }
            if parameter.type == "enum" {
                guard let name = parameter.enumName, enums[name] != nil else {
                    throw fail("parameter \"\(parameter.name)\" names no defined enumeration")
                }
                usedEnums.insert(name)
            } else if parameter.enumName != nil {
                throw fail("parameter \"\(parameter.name)\" has \"enum\" but its type is \"\(parameter.type)\"")
            }
            if (parameter.minimum != nil || parameter.maximum != nil)
                && !["integer", "double"].contains(parameter.type)
            {
                throw fail("parameter \"\(parameter.name)\" has bounds but its type is \"\(parameter.type)\"")
            }
        }
        for code in ConfirmCode.standard where !confirmCodes.contains(code.rawValue) {
            throw fail("confirmCodes lacks the standard code \"\(code.rawValue)\"")
        }
        for code in HandleCode.standard where !handleCodes.contains(code.rawValue) {
            throw fail("handleCodes lacks the standard code \"\(code.rawValue)\"")
        }
        for name in enums.keys.sorted() where !usedEnums.contains(name) {
            throw fail("enumeration \"\(name)\" is not used by any parameter")
        }
        for (label, codes) in [("confirmCodes", confirmCodes), ("handleCodes", handleCodes)]
        where Set(codes).count != codes.count {
            throw fail("\(label) lists a code twice")
        }
    }

    /// The definition's JSON form, as in the definition files (integral minimum/maximum as integers, absent
    /// optional keys left out, `enums` always present).
    public var jsonValue: JSONValue {
        let parameterValues = parameters.map { parameter -> JSONValue in
            var object: JSONObject = [
                "name": .string(parameter.name), "type": .string(parameter.type), "list": .bool(parameter.list),
                "required": .bool(parameter.required), "description": .string(parameter.description),
            ]
            if let minimum = parameter.minimum { object["minimum"] = ._number(minimum) }
            if let maximum = parameter.maximum { object["maximum"] = ._number(maximum) }
            if let enumName = parameter.enumName { object["enum"] = .string(enumName) }
            if let reasons = parameter.unsupportedReasons {
                object["unsupportedReasons"] = .array(reasons.map { .string($0) })
            }
            return .object(object)
        }
        var object: JSONObject = [
            "intent": .string(intent),
            "description": .string(description),
            "parameters": .array(parameterValues),
            "enums": .object(JSONObject(enums.mapValues { JSONValue.array($0.map { .string($0) }) })),
            "confirmCodes": .array(confirmCodes.map { .string($0) }),
            "handleCodes": .array(handleCodes.map { .string($0) }),
        ]
        if version != 1 { object["version"] = .int(Int64(version)) }
        if let maxAsks { object["maxAsks"] = .int(Int64(maxAsks)) }
        return .object(object)
    }
}

/// Strict reading of the objects of a definition file.
private struct _Fields {
    private var object: JSONObject
    private let path: String

    static func shape(_ message: String) -> IntentDefinitionError {
        IntentDefinitionError(code: .invalidShape, message: message)
    }

    init(_ value: JSONValue, at path: String) throws(IntentDefinitionError) {
        guard case .object(let object) = value else { throw Self.shape("\(path) must be an object") }
        self.object = object
        self.path = path
    }

    mutating func take(_ key: String) -> JSONValue? { object.removeValue(forKey: key) }

    mutating func require(_ key: String) throws(IntentDefinitionError) -> JSONValue {
        guard let value = take(key) else { throw Self.shape("\(path) has no \"\(key)\"") }
        return value
    }

    mutating func string(_ key: String, default: String? = nil) throws(IntentDefinitionError) -> String {
        guard let value = take(key) else {
            if let `default` { return `default` }
            throw Self.shape("\(path) has no \"\(key)\"")
        }
        guard case .string(let string) = value else { throw Self.shape("\(path).\(key) must be a string") }
        return string
    }

    mutating func optionalString(_ key: String) throws(IntentDefinitionError) -> String? {
        guard let value = take(key) else { return nil }
        guard case .string(let string) = value else { throw Self.shape("\(path).\(key) must be a string") }
        return string
    }

    mutating func bool(_ key: String) throws(IntentDefinitionError) -> Bool {
        guard case .bool(let bool) = try require(key) else { throw Self.shape("\(path).\(key) must be a boolean") }
        return bool
    }

    mutating func number(_ key: String) throws(IntentDefinitionError) -> Double? {
        switch take(key) {
        case nil: return nil
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value
        default: throw Self.shape("\(path).\(key) must be a number")
        }
    }

    mutating func array(_ key: String) throws(IntentDefinitionError) -> [JSONValue] {
        guard case .array(let array) = try require(key) else { throw Self.shape("\(path).\(key) must be an array") }
        return array
    }

    static func strings(_ value: JSONValue, at path: String) throws(IntentDefinitionError) -> [String] {
        guard case .array(let array) = value else { throw shape("\(path) must be an array of strings") }
        var strings: [String] = []
        for element in array {
            guard case .string(let string) = element else { throw shape("\(path) must be an array of strings") }
            strings.append(string)
        }
        return strings
    }

    func finish() throws(IntentDefinitionError) {
        if let key = object.keys.sorted().first { throw Self.shape("\(path) has unknown key \"\(key)\"") }
    }
}
