import ConciergeJSON

extension CodegenDefinition {
    /// Reads and checks a definition file: the format of `Schemas/PROTOCOL.md` section 11.11, strictly (every key
    /// present, no unknown key, identifiers, unique names, used enumerations, standard codes, `minimum` not above
    /// `maximum`), plus what the generated Swift needs (a file named `<intent>.intent.json`, an intent type that is an
    /// identifier, no parameter named like a member the generated code declares).
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - file: The file's path, as diagnostics should name it.
    /// - Throws: ``IntentCodegenError`` with every problem found, each with its JSON path.
    public init(jsonBytes bytes: [UInt8], file: String) throws(IntentCodegenError) {
        var reader = _DefinitionReader(file: file)
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            let position = _DefinitionReader.position(ofOffset: error.offset, in: bytes)
            throw IntentCodegenError(diagnostics: [
                DefinitionDiagnostic(
                    code: .invalidJSON, file: file, path: "", message: "not valid JSON (\(error.code))",
                    position: position)
            ])
        }
        let definition = reader.definition(json)
        guard let definition, reader.diagnostics.isEmpty else {
            throw IntentCodegenError(diagnostics: reader.diagnostics)
        }
        self = definition
    }
}

/// Reads a definition's JSON, collecting a diagnostic for every problem instead of stopping at the first.
struct _DefinitionReader {
    let file: String
    var diagnostics: [DefinitionDiagnostic] = []

    init(file: String) { self.file = file }

    /// Parameter names that would collide with members the generated code (or IntentKit) declares.
    static let reservedParameterNames: Set<String> = [
        "identifier", "intentType", "intentDescription", "parameters", "confirmCodes", "handleCodes", "isEmpty",
        "kind", "entries", "undeclared", "unsupported", "init", "self", "Type", "Protocol", "_",
    ]

    /// Case, reason and code names that would collide with members of the generated enumerations or of
    /// `ConfirmCode` and `HandleCode`.
    static let reservedMemberNames: Set<String> = [
        "rawValue", "allCases", "init", "self", "Type", "Protocol", "hashValue", "description", "standard", "enumName",
        "intentParameterType", "intentJSON",
    ]

    /// Enumeration names that would shadow a type the generated code uses.
    static let reservedTypeNames: Set<String> = [
        "String", "Int", "Double", "Bool", "Date", "Array", "Optional", "Sendable", "Hashable", "CaseIterable",
        "Intent", "IntentEnum", "IntentParameter", "IntentDateComponents", "CurrencyAmount", "Person", "Placemark",
        "ConfirmCode", "HandleCode", "ResolutionResult", "Resolutions", "IntentKit", "Self", "Type", "Protocol", "_",
    ]

    mutating func fail(_ code: DefinitionDiagnostic.Code, _ path: String, _ message: String) {
        diagnostics.append(DefinitionDiagnostic(code: code, file: file, path: path, message: message))
    }

    /// The 1-based line and column of a byte offset (columns count bytes).
    static func position(ofOffset offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || byte == UInt8(ascii: "_")
        }
        return isLetter(first)
            && text.utf8.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }

    static func jsonKind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    // MARK: Fields

    mutating func checkKeys(_ object: JSONObject, at path: String, allowed: [String]) {
        for key in object.keys where !allowed.contains(key) {
            fail(.unknownKey, Self.join(path, key), "unknown key (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    mutating func value(_ object: JSONObject, _ key: String, at path: String) -> JSONValue? {
        guard let value = object[key] else {
            fail(.missingKey, Self.join(path, key), "required key is missing")
            return nil
        }
        return value
    }

    mutating func string(_ object: JSONObject, _ key: String, at path: String, required: Bool = true) -> String? {
        guard let value = required ? value(object, key, at: path) : object[key] else { return nil }
        guard case .string(let string) = value else {
            fail(.wrongType, Self.join(path, key), "must be a string, not \(Self.jsonKind(value))")
            return nil
        }
        return string
    }

    mutating func bool(_ object: JSONObject, _ key: String, at path: String) -> Bool? {
        guard let value = value(object, key, at: path) else { return nil }
        guard case .bool(let bool) = value else {
            fail(.wrongType, Self.join(path, key), "must be true or false, not \(Self.jsonKind(value))")
            return nil
        }
        return bool
    }

    mutating func number(_ object: JSONObject, _ key: String, at path: String) -> Double? {
        switch object[key] {
        case nil: return nil
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value
        case let value?:
            fail(.wrongType, Self.join(path, key), "must be a number, not \(Self.jsonKind(value))")
            return nil
        }
    }

    /// An array of identifiers, each unique; problems name the element (`path[i]`).
    mutating func identifiers(
        _ value: JSONValue, at path: String, what: String, reserved: Set<String> = []
    ) -> [String]? {
        guard case .array(let elements) = value else {
            fail(.wrongType, path, "must be an array of strings, not \(Self.jsonKind(value))")
            return nil
        }
        var names: [String] = []
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard case .string(let name) = element else {
                fail(.wrongType, elementPath, "must be a string, not \(Self.jsonKind(element))")
                continue
            }
            if !Self.isIdentifier(name) {
                fail(
                    .invalidIdentifier, elementPath, "\(what) \"\(name)\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"
                )
            } else if name == "_" || reserved.contains(name) {
                fail(
                    .reservedName, elementPath,
                    "\(what) \"\(name)\" is reserved: the generated type has a member of that name")
            } else if let first = names.firstIndex(of: name) {
                fail(.duplicateName, elementPath, "\(what) \"\(name)\" appears twice (first at \(path)[\(first)])")
            }
            names.append(name)
        }
        return names
    }

    // MARK: The definition

    mutating func definition(_ json: JSONValue) -> CodegenDefinition? {
        guard case .object(let top) = json else {
            fail(.wrongType, "", "a definition must be a JSON object, not \(Self.jsonKind(json))")
            return nil
        }
        checkKeys(
            top, at: "",
            allowed: [
                "intent", "description", "version", "maxAsks", "parameters", "enums", "confirmCodes", "handleCodes",
            ])
        let intent = string(top, "intent", at: "")
        if let intent { checkIntentName(intent) }
        let description = string(top, "description", at: "")
        let enums = enumerations(top)
        var parameters: [CodegenDefinition.Parameter] = []
        if let value = value(top, "parameters", at: "") {
            if case .array(let elements) = value {
                for (index, element) in elements.enumerated() {
                    if let parameter = parameter(element, at: "parameters[\(index)]", enums: enums, before: parameters)
                    {
                        parameters.append(parameter)
                    }
                }
            } else {
                fail(.wrongType, "parameters", "must be an array, not \(Self.jsonKind(value))")
            }
        }
        if let enums {
            let used = Set(parameters.compactMap(\.enumName))
            for enumeration in enums where !used.contains(enumeration.name) {
                fail(
                    .badEnum, "enums.\(enumeration.name)",
                    "enumeration \"\(enumeration.name)\" is not used by any parameter")
            }
            let nested = Set(parameters.map { _SwiftSyntax.reasonTypeName(ofParameter: $0.name) })
            for enumeration in enums where nested.contains(enumeration.name) {
                fail(.reservedName, "enums.\(enumeration.name)", "the name is taken by a generated reason type")
            }
            if let intent, enums.contains(where: { $0.name == intent + "Intent" }) {
                fail(.reservedName, "enums.\(intent)Intent", "the name is taken by the generated intent struct")
            }
        }
        let confirmCodes = codes(top, "confirmCodes", standard: CodegenDefinition.standardConfirmCodes)
        let handleCodes = codes(top, "handleCodes", standard: CodegenDefinition.standardHandleCodes)
        var version = 1
        if let value = top["version"] {
            if let number = value.intValue, number >= 1 {
                version = number
            } else {
                fail(.wrongType, "version", "must be a whole number from 1, not \(Self.jsonKind(value))")
            }
        }
        var maxAsks: Int?
        if let value = top["maxAsks"] {
            if let number = value.intValue, (1...100).contains(number) {
                maxAsks = number
            } else {
                fail(.wrongType, "maxAsks", "must be a whole number from 1 to 100, not \(Self.jsonKind(value))")
            }
        }
        guard let intent, let description, let enums, let confirmCodes, let handleCodes else { return nil }
        var definition = CodegenDefinition(
            intent: intent, description: description, parameters: parameters, enums: enums,
            confirmCodes: confirmCodes, handleCodes: handleCodes)
        definition.version = version
        definition.maxAsks = maxAsks
        return definition
    }

    mutating func checkIntentName(_ intent: String) {
        if !Self.isIdentifier(intent) {
            fail(
                .invalidIdentifier, "intent",
                "\"\(intent)\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*), so no Swift type can be named after it")
            return
        }
        let fileName = file.split(separator: "/").last.map(String.init) ?? file
        if fileName != intent + ".intent.json" {
            fail(
                .fileName, "intent",
                "\"\(intent)\" is defined in \"\(fileName)\"; name the file \"\(intent).intent.json\"")
        }
    }

    mutating func enumerations(_ top: JSONObject) -> [CodegenDefinition.Enumeration]? {
        guard let value = value(top, "enums", at: "") else { return nil }
        guard case .object(let object) = value else {
            fail(.wrongType, "enums", "must be an object, not \(Self.jsonKind(value))")
            return nil
        }
        var enums: [CodegenDefinition.Enumeration] = []
        for (name, casesValue) in object {
            let path = "enums.\(name)"
            if !Self.isIdentifier(name) {
                fail(
                    .invalidIdentifier, path,
                    "enumeration name \"\(name)\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)")
            } else if Self.reservedTypeNames.contains(name) || _SwiftSyntax.keywords.contains(name) {
                fail(.reservedName, path, "enumeration name \"\(name)\" is taken by a type the generated code uses")
            }
            guard let cases = identifiers(casesValue, at: path, what: "case", reserved: Self.reservedMemberNames) else {
                continue
            }
            if cases.isEmpty { fail(.badEnum, path, "an enumeration needs at least one case") }
            enums.append(CodegenDefinition.Enumeration(name: name, cases: cases))
        }
        return enums
    }

    mutating func codes(_ top: JSONObject, _ key: String, standard: [String]) -> [String]? {
        guard let value = value(top, key, at: "") else { return nil }
        guard let codes = identifiers(value, at: key, what: "code", reserved: Self.reservedMemberNames) else {
            return nil
        }
        for code in standard where !codes.contains(code) {
            fail(.missingStandardCode, key, "lacks the standard code \"\(code)\"")
        }
        return codes
    }

    mutating func parameter(
        _ value: JSONValue, at path: String, enums: [CodegenDefinition.Enumeration]?,
        before: [CodegenDefinition.Parameter]
    ) -> CodegenDefinition.Parameter? {
        guard case .object(let object) = value else {
            fail(.wrongType, path, "a parameter must be an object, not \(Self.jsonKind(value))")
            return nil
        }
        checkKeys(
            object, at: path,
            allowed: [
                "name", "type", "list", "required", "description", "minimum", "maximum", "enum", "unsupportedReasons",
            ])
        let name = string(object, "name", at: path)
        if let name {
            if !Self.isIdentifier(name) {
                fail(.invalidIdentifier, "\(path).name", "\"\(name)\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)")
            } else if Self.reservedParameterNames.contains(name) {
                fail(
                    .reservedName, "\(path).name",
                    "\"\(name)\" is reserved: the generated code declares a member of that name")
            } else if let first = before.firstIndex(where: { $0.name == name }) {
                fail(
                    .duplicateName, "\(path).name",
                    "parameter \"\(name)\" appears twice (first at parameters[\(first)])")
            }
        }
        var type: CodegenDefinition.ValueType?
        if let typeName = string(object, "type", at: path) {
            type = CodegenDefinition.ValueType(rawValue: typeName)
            if type == nil {
                let known = CodegenDefinition.ValueType.allCases.map(\.rawValue).joined(separator: ", ")
                fail(.unknownType, "\(path).type", "unknown type \"\(typeName)\" (expected one of \(known))")
            }
        }
        let list = bool(object, "list", at: path)
        let required = bool(object, "required", at: path)
        let description = string(object, "description", at: path)
        let minimum = number(object, "minimum", at: path)
        let maximum = number(object, "maximum", at: path)
        if let type, type != .integer, type != .double {
            for key in ["minimum", "maximum"] where object[key] != nil {
                fail(
                    .badBounds, "\(path).\(key)",
                    "bounds apply to integer and double parameters only, not \"\(type.rawValue)\"")
            }
        }
        if let minimum, let maximum, minimum > maximum {
            fail(
                .badBounds, "\(path).minimum",
                "minimum \(_SwiftSyntax.number(minimum)) is greater than maximum \(_SwiftSyntax.number(maximum))")
        }
        let enumName = string(object, "enum", at: path, required: false)
        if type == .enumeration {
            if enumName == nil, object["enum"] == nil {
                fail(
                    .undefinedEnum, "\(path).enum", "required key is missing: type \"enum\" names an entry of \"enums\""
                )
            } else if let enumName, let enums, !enums.contains(where: { $0.name == enumName }) {
                fail(.undefinedEnum, "\(path).enum", "no enumeration \"\(enumName)\" in \"enums\"")
            }
        } else if let type, object["enum"] != nil {
            fail(
                .undefinedEnum, "\(path).enum",
                "only parameters of type \"enum\" name an enumeration, not \"\(type.rawValue)\"")
        }
        let reasons = object["unsupportedReasons"].flatMap { value in
            identifiers(value, at: "\(path).unsupportedReasons", what: "reason", reserved: Self.reservedMemberNames)
        }
        guard let name, let type, let list, let required, let description else { return nil }
        return CodegenDefinition.Parameter(
            name: name, type: type, list: list, required: required, description: description, minimum: minimum,
            maximum: maximum, enumName: type == .enumeration ? enumName : nil, unsupportedReasons: reasons)
    }
}
