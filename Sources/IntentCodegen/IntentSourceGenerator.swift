/// Turns the intent definition files of one target into Swift source, one file per definition.
///
/// For a definition `SendPayment.intent.json` the source declares:
/// - `SendPaymentIntent`, an `Intent` struct: a doc-commented optional property per parameter, the static
///   `parameters` list (with `required`, `description`, bounds and unsupported reasons), `confirmCodes`,
///   `handleCodes`, `init()` and a memberwise initializer whose arguments all default to nil;
/// - per parameter with `unsupportedReasons`, a nested enumeration of them, e.g.
///   `SendPaymentIntent.PayeeUnsupportedReason`;
/// - typed resolution accessors on `Resolutions<SendPaymentIntent>`: a property per parameter
///   (`resolutions.payee = .success(person)`) and, per parameter with reasons,
///   `resolutions.unsupported(payee: .noContactFound)`, which only accepts the declared reasons;
/// - each enumeration of `enums` as a `String` `IntentEnum`, and each intent-specific code as a static member of
///   `ConfirmCode` or `HandleCode`.
///
/// An enumeration or a custom code declared by several definitions of the target is generated once, in the first
/// of them by path; declaring an enumeration twice with different cases is an error.
public enum IntentSourceGenerator {
    /// One definition file given to the generator.
    public struct Input: Sendable, Hashable {
        /// The file's path, as diagnostics name it.
        public var file: String
        /// The file's contents.
        public var bytes: [UInt8]

        /// Creates an input.
        public init(file: String, bytes: [UInt8]) {
            self.file = file
            self.bytes = bytes
        }
    }

    /// The name of the Swift file generated for a definition file: its name with `.json` replaced by `.swift`
    /// (`SendMessage.intent.json` gives `SendMessage.intent.swift`). The build-tool plugin uses the same rule.
    public static func outputFileName(forDefinitionFile file: String) -> String {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        return (name.hasSuffix(".json") ? String(name.dropLast(5)) : name) + ".swift"
    }

    /// Checks every input and generates one source per input, in input order.
    /// - Throws: ``IntentCodegenError`` with the diagnostics of every input (and the conflicts between inputs).
    public static func generate(_ inputs: [Input]) throws(IntentCodegenError) -> [String] {
        var diagnostics: [DefinitionDiagnostic] = []
        var definitions: [CodegenDefinition?] = []
        for input in inputs {
            do {
                definitions.append(try CodegenDefinition(jsonBytes: input.bytes, file: input.file))
            } catch {
                diagnostics += error.diagnostics
                definitions.append(nil)
            }
        }
        // Which input declares each shared enumeration and custom code: the first by path.
        var enumOwner: [String: (input: Int, cases: [String])] = [:]
        var intentOwner: [String: Int] = [:]
        var confirmOwner: [String: Int] = [:]
        var handleOwner: [String: Int] = [:]
        let order = inputs.indices.sorted { inputs[$0].file < inputs[$1].file }
        for index in order {
            guard let definition = definitions[index] else { continue }
            let file = inputs[index].file
            if let other = intentOwner[definition.intent] {
                diagnostics.append(
                    DefinitionDiagnostic(
                        code: .conflict, file: file, path: "intent",
                        message: "intent type \"\(definition.intent)\" is also defined in \(inputs[other].file)"))
            } else {
                intentOwner[definition.intent] = index
            }
            for enumeration in definition.enums {
                if let owner = enumOwner[enumeration.name] {
                    if owner.cases != enumeration.cases {
                        diagnostics.append(
                            DefinitionDiagnostic(
                                code: .conflict, file: file, path: "enums.\(enumeration.name)",
                                message:
                                    "enumeration \"\(enumeration.name)\" is declared with other cases in \(inputs[owner.input].file)"
                            ))
                    }
                } else {
                    enumOwner[enumeration.name] = (index, enumeration.cases)
                }
            }
            for code in definition.customConfirmCodes where confirmOwner[code] == nil { confirmOwner[code] = index }
            for code in definition.customHandleCodes where handleOwner[code] == nil { handleOwner[code] = index }
        }
        for (name, owner) in enumOwner.sorted(by: { $0.key < $1.key }) {
            if let intent = intentOwner.keys.first(where: { $0 + "Intent" == name }) {
                diagnostics.append(
                    DefinitionDiagnostic(
                        code: .conflict, file: inputs[owner.input].file, path: "enums.\(name)",
                        message: "the name is taken by the struct generated for intent type \"\(intent)\""))
            }
        }
        guard diagnostics.isEmpty else { throw IntentCodegenError(diagnostics: diagnostics) }
        return inputs.indices.map { index in
            let definition = definitions[index]!
            var writer = _SourceWriter(definition: definition, file: inputs[index].file)
            return writer.source(
                enums: definition.enums.filter { enumOwner[$0.name]?.input == index },
                confirmCodes: definition.customConfirmCodes.filter { confirmOwner[$0] == index },
                handleCodes: definition.customHandleCodes.filter { handleOwner[$0] == index })
        }
    }
}
