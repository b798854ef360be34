import ConciergeJSON
import IntentKit
import Synchronization
import Testing

/// An intent with one required and one optional parameter, for the rule that required parameters hold
/// (PROTOCOL.md section 5.11, step 4b, and the resolve default).
private struct PizzaIntent: Intent {
    static let intentType = "Pizza"
    static let parameters: [IntentParameter<PizzaIntent>] = [
        .init("size", \.size, required: true),
        .init("note", \.note),
    ]
    var identifier: String?
    var size: String?
    var note: String?
    init() {}
}

/// Counts the handlers made, so a test can tell that no handler code ran; resolves `size` to `medium` when asked.
private struct PizzaHandler: IntentHandler {
    static let made = Atomic<Int>(0)
    let defaultsSize: Bool

    init(defaultsSize: Bool = false) {
        self.defaultsSize = defaultsSize
        Self.made.wrappingAdd(1, ordering: .relaxed)
    }

    func resolve(intent: PizzaIntent, context: HandlerContext) async throws -> Resolutions<PizzaIntent> {
        var resolutions = Resolutions<PizzaIntent>()
        if defaultsSize, intent.size == nil { resolutions[\.size] = .success("medium") }
        return resolutions
    }

    func handle(intent: PizzaIntent, context: HandlerContext) async throws -> HandleResponse<PizzaIntent> {
        // What a handler that trusts `required: true` does: it crashes the worker if the rule does not hold.
        HandleResponse(code: .success, data: ["size": .string(intent.size!)])
    }
}

@Suite(.serialized) struct RequiredParameterTests {
    private let provider: HandlerProvider = {
        var provider = HandlerProvider()
        provider.register { PizzaHandler() }
        return provider
    }()

    @Test func aMissingRequiredParameterResolvesNeedsValueAndStopsTheLifecycle() async throws {
        let job = try await runJob(
            "Pizza", .resolve, #"{"intent": {"type": "Pizza", "parameters": {}}}"#, provider: provider)
        #expect(job.kind("size") == "needsValue")
        #expect(job.kind("note") == "notRequired")
        #expect(job.outcome == .stop)
    }

    @Test func aHandlerThatResolvesTheMissingParameterItselfSaysOtherwise() async throws {
        var provider = HandlerProvider()
        provider.register { PizzaHandler(defaultsSize: true) }
        let job = try await runJob(
            "Pizza", .resolve, #"{"intent": {"type": "Pizza", "parameters": {}}}"#, provider: provider)
        #expect(job.kind("size") == "success")
        #expect(job.parameter("size") == "medium")
        #expect(job.outcome == .continue)
    }

    @Test(arguments: [IntentPhase.confirm, .handle])
    func confirmOrHandleWithoutARequiredParameterEndsBeforeAnyHandlerIsMade(phase: IntentPhase) async throws {
        let before = PizzaHandler.made.load(ordering: .relaxed)
        for parameters in [#"{}"#, #"{"size": null, "note": "x"}"#] {
            let job = try await runJob(
                "Pizza", phase, #"{"intent": {"type": "Pizza", "parameters": \#(parameters)}}"#, provider: provider)
            #expect(job.outcome == .error)
            #expect(job.json["code"] == "missing-parameter")
            #expect(job.json["parameter"] == "size")
            #expect(job.json["intent"] == "Pizza")
        }
        #expect(PizzaHandler.made.load(ordering: .relaxed) == before)
    }

    @Test func withTheRequiredParameterTheHandlerRuns() async throws {
        let job = try await runJob(
            "Pizza", .handle, #"{"intent": {"type": "Pizza", "parameters": {"size": "large"}}}"#, provider: provider)
        #expect(job.json["handle"]?["code"] == "success")
        #expect(job.json["handle"]?["data"]?["size"] == "large")
    }

    @Test func aLifecycleStopsAtResolveAskingForTheMissingValue() async throws {
        let result = await provider.runLifecycle(
            intentType: "Pizza", body: Array(#"{"intent": {"type": "Pizza", "parameters": {}}}"#.utf8))
        #expect(result.phase == .resolve)
        #expect(result.json?["resolve"]?["size"]?["kind"] == "needsValue")
    }
}

/// ``IntentDefinition/check(intent:phase:)``: a client's check of an intent against a served definition gives the
/// code a worker would.
@Suite struct DefinitionCheckTests {
    private let definition = IntentDefinition(
        intent: "Pizza",
        parameters: [
            .init(name: "size", type: "enum", list: false, required: true, enumName: "Size"),
            .init(name: "slices", type: "integer", list: false, required: false, minimum: 4, maximum: 12),
            .init(name: "toppings", type: "string", list: true, required: false),
        ],
        enums: ["Size": ["small", "large"]])

    private func code(_ parameters: String, phase: IntentPhase = .lifecycle) throws -> String? {
        let intent = try JSONValue.parse(Array(#"{"type": "Pizza", "parameters": \#(parameters)}"#.utf8))
        do {
            try definition.check(intent: intent, phase: phase)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test func aValidIntentPasses() throws {
        #expect(try code(#"{"size": "small", "slices": 8, "toppings": ["ham"]}"#) == nil)
        #expect(try code(#"{}"#) == nil)  // a resolve asks for size
    }

    @Test func eachViolationGetsTheWorkersCode() throws {
        #expect(try code(#"{"sauce": "red"}"#) == "unknown-parameter")
        #expect(try code(#"{"size": 3}"#) == "invalid-type")
        #expect(try code(#"{"size": "huge"}"#) == "invalid-enum")
        #expect(try code(#"{"slices": 2}"#) == "out-of-range")
        #expect(try code(#"{"toppings": "ham"}"#) == "invalid-type")
        #expect(try code(#"{}"#, phase: .handle) == "missing-parameter")
        #expect(try code(#"{}"#, phase: .confirm) == "missing-parameter")
    }

    /// `minimum`/`maximum` messages write an integral bound or value as an integer (`at most 12, got 400`, also for
    /// a value sent as `400.0`) and a fractional one as a decimal.
    @Test func outOfRangeMessagesWriteIntegralNumbersAsIntegers() throws {
        let definition = IntentDefinition(
            intent: "Pizza",
            parameters: [
                .init(name: "slices", type: "integer", list: false, required: false, minimum: 4, maximum: 12),
                .init(name: "weight", type: "double", list: true, required: false, minimum: 0.5, maximum: 2.5),
            ])
        for (parameters, message) in [
            (#"{"slices": 400}"#, #""slices" must be at most 12, got 400"#),
            (#"{"slices": 2}"#, #""slices" must be at least 4, got 2"#),
            (#"{"weight": [1, 3]}"#, #""weight" must be at most 2.5, got 3"#),
            (#"{"weight": [400.0]}"#, #""weight" must be at most 2.5, got 400"#),
            (#"{"weight": [2.75]}"#, #""weight" must be at most 2.5, got 2.75"#),
            (#"{"weight": [0.25]}"#, #""weight" must be at least 0.5, got 0.25"#),
            (#"{"weight": [-3]}"#, #""weight" must be at least 0.5, got -3"#),
        ] {
            let intent = try JSONValue.parse(Array(#"{"type": "Pizza", "parameters": \#(parameters)}"#.utf8))
            var thrown: IntentError?
            do { try definition.check(intent: intent) } catch { thrown = error }
            #expect(thrown?.code.rawValue == "out-of-range", "\(parameters)")
            #expect(thrown?.message == message)
        }
    }
}
