import Foundation
import PackagePlugin

/// Generates Swift from the intent definition files of a target: every file of the target whose name ends in
/// `.intent.json` (see `Docs/CODEGEN.md`). One command runs `concierge-intentgen` over all of them, so that an
/// enumeration or a response code shared by several definitions is declared once; it writes `<name>.intent.swift`
/// per definition into the plugin's work directory, and SwiftPM compiles those with the target.
@main
struct IntentDefinitionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? any SourceModuleTarget else { return [] }
        let definitions = target.sourceFiles.map(\.url)
            .filter { $0.lastPathComponent.hasSuffix(".intent.json") }
            .sorted { $0.path < $1.path }
        guard !definitions.isEmpty else { return [] }
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedIntents")
        return [
            .buildCommand(
                displayName: "Generating intents of \(target.name) from \(definitions.count) definition files",
                executable: try context.tool(named: "concierge-intentgen").url,
                arguments: ["--output-directory", output.path] + definitions.map(\.path),
                inputFiles: definitions,
                outputFiles: definitions.map {
                    output.appending(path: String($0.lastPathComponent.dropLast(".json".count)) + ".swift")
                }
            )
        ]
    }
}
