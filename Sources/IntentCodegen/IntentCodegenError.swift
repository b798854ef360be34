/// Intent definition files that cannot be turned into Swift: every problem found, in file order.
public struct IntentCodegenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems, each naming its file and JSON path; never empty.
    public let diagnostics: [DefinitionDiagnostic]

    /// Creates an error from its diagnostics.
    public init(diagnostics: [DefinitionDiagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One line per diagnostic, in the `file: error: message` form.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
