extension IntentDefinition {
    /// Renders the definition of a Swift intent type: its parameters (names, types, list flags, metadata), the
    /// enumerations they use, and its confirm and handle codes.
    public init<I: Intent>(describing intentType: I.Type) {
        var enums: [String: [String]] = [:]
        let parameters = I.parameters.map { parameter -> Parameter in
            var enumName: String?
            if case .enumeration(let name, let cases) = parameter.type.elementType {
                enumName = name
                enums[name] = cases
            }
            return Parameter(
                name: parameter.name,
                type: parameter.type.typeName,
                list: parameter.type.isList,
                required: parameter.isRequired,
                description: parameter.description,
                minimum: parameter.minimum,
                maximum: parameter.maximum,
                enumName: enumName,
                unsupportedReasons: parameter.unsupportedReasons.isEmpty ? nil : parameter.unsupportedReasons
            )
        }
        self.init(
            intent: I.intentType,
            description: I.intentDescription,
            parameters: parameters,
            enums: enums,
            confirmCodes: I.confirmCodes.map(\.rawValue),
            handleCodes: I.handleCodes.map(\.rawValue)
        )
        self.version = I.definitionVersion
        self.maxAsks = I.conversationMaxAsks
    }
}
