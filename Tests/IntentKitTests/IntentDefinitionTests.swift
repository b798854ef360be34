import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentKit
import Testing

/// The example intents are generated from their definition files (`Sources/ConciergeExamples/Intents`, linked from
/// `Schemas/intents`; Docs/CODEGEN.md): what each generated struct describes must be its file, key for key.
@Suite("Intent definitions")
struct IntentDefinitionTests {
    static let exampleTypeNames = Examples.intentTypes.map { $0.intentType }

    static func type(named name: String) throws -> any Intent.Type {
        try #require(Examples.intentTypes.first { $0.intentType == name })
    }

    static func fileBytes(_ name: String) throws -> [UInt8] {
        let url = repositoryRoot.appendingPathComponent("Schemas/intents/\(name).json")
        return try [UInt8](Data(contentsOf: url))
    }

    @Test("definition file agrees with the Swift intent type", arguments: exampleTypeNames)
    func definitionFileAgreesWithSwiftType(name: String) throws {
        let bytes = try Self.fileBytes(name)
        let loaded = try IntentDefinition(jsonBytes: bytes)
        let rendered = IntentDefinition(describing: try Self.type(named: name))
        #expect(loaded == rendered)
        // The file holds nothing the Swift type does not say (same JSON, key for key).
        #expect(try JSONValue.parse(bytes) == rendered.jsonValue)
        // And the provider serves the same definition.
        #expect(Examples.provider.definition(of: name) == rendered)
    }

    @Test func everyExampleHasExactlyOneDefinitionFile() throws {
        let folder = repositoryRoot.appendingPathComponent("Schemas/intents")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(Set(files) == Set(Self.exampleTypeNames.map { "\($0).json" }))
        let sources = repositoryRoot.appendingPathComponent("Sources/ConciergeExamples/Intents")
        let definitions = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { $0.hasSuffix(".intent.json") }
        #expect(Set(definitions) == Set(Self.exampleTypeNames.map { "\($0).intent.json" }))
        #expect(Examples.provider.intentTypes == Self.exampleTypeNames.sorted())
    }

    @Test func definitionsCarryTypesListsEnumsAndIntentSpecificCodes() throws {
        let message = IntentDefinition(describing: SendMessageIntent.self)
        #expect(message.parameters.map(\.name) == ["recipient", "content", "attachments"])
        #expect(message.parameters.map(\.type) == ["person", "string", "string"])
        #expect(message.parameters.map(\.list) == [false, false, true])
        #expect(message.parameters[0].required)
        #expect(message.parameters[0].unsupportedReasons == ["noContactFound"])

        let workout = IntentDefinition(describing: StartWorkoutIntent.self)
        #expect(workout.enums["WorkoutLocationType"] == ["unknown", "outdoor", "indoor"])
        #expect(workout.parameters.first { $0.name == "workoutLocationType" }?.enumName == "WorkoutLocationType")
        #expect(workout.parameters.first { $0.name == "goalValue" }?.type == "double")
        #expect(workout.parameters.first { $0.name == "isOpenEnded" }?.type == "boolean")

        let payment = IntentDefinition(describing: SendPaymentIntent.self)
        #expect(payment.parameters.first { $0.name == "currencyAmount" }?.type == "currencyAmount")
        #expect(payment.confirmCodes == ["ready", "failure", "failureRequiringAppLaunch", "failureInsufficientFunds"])
        #expect(payment.handleCodes.last == "failureInsufficientFunds")

        let ride = IntentDefinition(describing: RequestRideIntent.self)
        let partySize = try #require(ride.parameters.first { $0.name == "partySize" })
        #expect(partySize.type == "integer" && partySize.minimum == 1 && partySize.maximum == 20)
        #expect(ride.parameters.first { $0.name == "scheduledPickupTime" }?.type == "dateComponents")
        #expect(ride.handleCodes.contains("failureRequiringAppLaunchNoServiceInArea"))
        #expect(ride.confirmCodes == ConfirmCode.standard.map(\.rawValue))

        let echo = IntentDefinition(describing: EchoIntent.self)
        #expect(echo.enums == ["EchoPhase": ["resolve", "confirm", "handle"]])
    }

    /// The handlers' reason enumerations (with a doc comment per case) say the same as the definitions, whose
    /// reasons the generated `<Parameter>UnsupportedReason` types list.
    @Test func handlerReasonsAreTheDefinitionsReasons() {
        func names<R: RawRepresentable<String> & CaseIterable>(_ type: R.Type) -> [String] {
            type.allCases.map(\.rawValue)
        }
        #expect(names(ContactUnsupportedReason.self) == names(SendMessageIntent.RecipientUnsupportedReason.self))
        #expect(names(ContactUnsupportedReason.self) == names(SendPaymentIntent.PayeeUnsupportedReason.self))
        #expect(names(LocationUnsupportedReason.self) == names(RequestRideIntent.PickupLocationUnsupportedReason.self))
        #expect(
            names(LocationUnsupportedReason.self) == names(RequestRideIntent.DropOffLocationUnsupportedReason.self))
        #expect(
            names(SendPaymentHandler.UnsupportedReason.self)
                == names(SendPaymentIntent.CurrencyAmountUnsupportedReason.self))
        #expect(
            names(RequestRideHandler.UnsupportedReason.self)
                == names(RequestRideIntent.RideOptionNameUnsupportedReason.self)
                + names(RequestRideIntent.PartySizeUnsupportedReason.self)
                + names(RequestRideIntent.ScheduledPickupTimeUnsupportedReason.self))
        #expect(
            names(StartWorkoutHandler.UnsupportedReason.self)
                == names(StartWorkoutIntent.GoalValueUnsupportedReason.self))
    }

    @Test func definitionTypesRoundTripToParameterTypes() throws {
        let probe = IntentDefinition(describing: ProbeIntent.self)
        for parameter in ProbeIntent.parameters {
            let described = try #require(probe.parameters.first { $0.name == parameter.name })
            #expect(probe.parameterType(of: described) == parameter.type, "\(parameter.name)")
        }
        #expect(
            probe.parameters.first { $0.name == "levels" }.map { ($0.type, $0.list, $0.enumName) }! == (
                "enum", true, "ProbeLevel"
            ))
    }

    @Test(
        "loader rejects inconsistent or misshapen definitions",
        arguments: [
            (
                #"{"intent":"X","parameters":[{"name":"a","type":"colour","list":false,"required":false}],"confirmCodes":[],"handleCodes":[]}"#,
                "inconsistent"
            ),
            (
                #"{"intent":"X","parameters":[{"name":"a","type":"enum","enum":"E","list":false,"required":false}],"confirmCodes":[],"handleCodes":[]}"#,
                "inconsistent"
            ),
            (
                #"{"intent":"X","parameters":[{"name":"a","type":"string","list":false,"required":false},{"name":"a","type":"string","list":false,"required":false}],"confirmCodes":[],"handleCodes":[]}"#,
                "inconsistent"
            ),
            (#"{"intent":"X","parameters":[],"enums":{"E":["a"]},"confirmCodes":[],"handleCodes":[]}"#, "inconsistent"),
            (
                #"{"intent":"X","parameters":[{"name":"a","type":"string","list":"no","required":false}],"confirmCodes":[],"handleCodes":[]}"#,
                "invalid-shape"
            ),
            (#"{"intent":"X","parameters":[],"confirmCodes":[],"handleCodes":[],"colour":1}"#, "invalid-shape"),
            (#"{"intent":"X","parameters":[]}"#, "invalid-shape"),
            (
                #"{"intent":"X","parameters":[{"name":"a","type":"string","minimum":1,"list":false,"required":false}],"confirmCodes":["ready","failure","failureRequiringAppLaunch"],"handleCodes":["success","inProgress","continueInApp","failure","failureRequiringAppLaunch"]}"#,
                "inconsistent"
            ),
            (
                #"{"intent":"X","parameters":[],"confirmCodes":["ready","failure"],"handleCodes":["success","inProgress","continueInApp","failure","failureRequiringAppLaunch"]}"#,
                "inconsistent"
            ),
            (#"{"intent":"X","#, "invalid-json"),
        ]
    )
    func loaderRejectsBadDefinitions(text: String, code: String) {
        #expect {
            _ = try IntentDefinition(jsonBytes: Array(text.utf8))
        } throws: { error in
            (error as? IntentDefinitionError)?.code.rawValue == code
        }
    }

    @Test func definitionIsCodable() throws {
        let definition = IntentDefinition(describing: StartWorkoutIntent.self)
        let data = try JSONEncoder().encode(definition)
        #expect(try JSONDecoder().decode(IntentDefinition.self, from: data) == definition)
        let fileDecoded = try JSONDecoder().decode(IntentDefinition.self, from: Data(Self.fileBytes("StartWorkout")))
        #expect(fileDecoded == definition)
    }
}
