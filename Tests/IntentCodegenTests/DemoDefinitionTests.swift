import ConciergeExamples
import Foundation
import IntentCodegen
import IntentKit
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

@Suite("Demo definitions")
struct DemoDefinitionTests {
    static let intentsFolder = repositoryRoot.appendingPathComponent("Sources/ConciergeExamples/Intents")

    static func demoInputs() throws -> [IntentSourceGenerator.Input] {
        let names = try FileManager.default.contentsOfDirectory(atPath: intentsFolder.path)
            .filter { $0.hasSuffix(".intent.json") }.sorted()
        return try names.map { name in
            let url = intentsFolder.appendingPathComponent(name)
            return IntentSourceGenerator.Input(file: url.path, bytes: [UInt8](try Data(contentsOf: url)))
        }
    }

    /// The folder the build-tool plugin wrote ConciergeExamples' sources to, found from the test bundle's build
    /// folder (`<scratch>/<triple>/debug/...xctest`, plugin outputs under `<scratch>/plugins/outputs`).
    static func pluginOutputFolder() throws -> URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while folder.path != "/" {
            let outputs = folder.appendingPathComponent("plugins/outputs")
            if let enumerator = FileManager.default.enumerator(atPath: outputs.path) {
                for case let path as String in enumerator
                where path.hasSuffix("ConciergeExamples/destination/IntentDefinitionPlugin/GeneratedIntents")
                    || (path.contains("/ConciergeExamples/")
                        && path.hasSuffix("IntentDefinitionPlugin/GeneratedIntents"))
                {
                    return outputs.appendingPathComponent(path)
                }
            }
            folder.deleteLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile)
    }

    @Test func theBuildCompilesWhatTheGeneratorGivesForTheDemoDefinitions() throws {
        let inputs = try Self.demoInputs()
        #expect(inputs.count == Examples.intentTypes.count)
        let sources = try IntentSourceGenerator.generate(inputs)
        let folder = try Self.pluginOutputFolder()
        let built = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(Set(built) == Set(inputs.map { IntentSourceGenerator.outputFileName(forDefinitionFile: $0.file) }))
        for (input, source) in zip(inputs, sources) {
            let name = IntentSourceGenerator.outputFileName(forDefinitionFile: input.file)
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(text == source, "\(name) differs from the generator's output")
        }
    }

    @Test func everyDemoIntentTypeIsGeneratedFromItsDefinitionFile() throws {
        let definitions = try Self.demoInputs().map { try CodegenDefinition(jsonBytes: $0.bytes, file: $0.file) }
        #expect(definitions.map(\.intent).sorted() == Examples.intentTypes.map { $0.intentType }.sorted())
        for type in Examples.intentTypes {
            let definition = try #require(definitions.first { $0.intent == type.intentType })
            #expect(String(describing: type) == definition.swiftTypeName)
            #expect(type.intentDescription == definition.description)
        }
    }

    @Test func generatedAPIWorksAsAHandlerUsesIt() {
        var resolutions = Resolutions<SendPaymentIntent>()
        resolutions.unsupported(currencyAmount: .paymentsCurrencyUnsupported)
        resolutions.payee = .needsValue
        #expect(resolutions[\.currencyAmount] == .unsupported(reason: "paymentsCurrencyUnsupported"))
        #expect(resolutions.currencyAmount == .unsupported(reason: "paymentsCurrencyUnsupported"))
        #expect(resolutions.kind(ofParameterNamed: "payee") == .needsValue)
        #expect(resolutions.note == nil)

        let intent = SendPaymentIntent(note: "thanks")
        #expect(intent.note == "thanks" && intent.payee == nil && intent.identifier == nil)
        #expect(
            ConfirmResponse<SendPaymentIntent>(code: .failureInsufficientFunds).code.rawValue
                == "failureInsufficientFunds")
        #expect(
            HandleCode.failureRequiringAppLaunchNoServiceInArea.rawValue == "failureRequiringAppLaunchNoServiceInArea")
        #expect(WorkoutLocationType.allCases.map(\.rawValue) == ["unknown", "outdoor", "indoor"])
        #expect(EchoPhase(rawValue: "confirm") == .confirm)
        #expect(StartWorkoutIntent(workoutGoalUnitType: .kiloCalorie).workoutGoalUnitType?.intentJSON == "kiloCalorie")
    }

    @Test(
        "Schemas/intents/<Type>.json is a link to the target's definition file",
        arguments: ["Echo", "RequestRide", "SendMessage", "SendPayment", "StartWorkout"])
    func schemaFileIsALinkToTheTargetsDefinition(name: String) throws {
        let link = repositoryRoot.appendingPathComponent("Schemas/intents/\(name).json").path
        let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link)
        #expect(destination == "../../Sources/ConciergeExamples/Intents/\(name).intent.json")
        #expect(FileManager.default.contents(atPath: link) != nil)
    }
}
