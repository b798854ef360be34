import ConciergeExamples
import ConciergeJSON
import IntentKit
import Testing

@Suite("Lifecycle without a broker")
struct LifecycleTests {
    @Test func completeMessageRunsResolveConfirmAndHandle() async throws {
        let intent = SendMessageIntent(recipient: Person(displayName: "Anna"), content: "Hello")
        let result = await Examples.provider.runLifecycle(intent)
        #expect(result.phase == .handle)
        #expect(result.output.outcome == .stop)
        let json = try #require(result.json)
        #expect(json["resolve"]?["recipient"]?["kind"] == "success")
        #expect(json["confirm"]?["code"] == "ready")
        #expect(json["handle"]?["code"] == "success")
        // The handle phase saw the written-back recipient.
        #expect(json["intent"]?["parameters"]?["recipient"]?["customIdentifier"] == "contact-anna")
    }

    @Test func ambiguousRecipientStopsAfterResolve() async throws {
        let result = await Examples.provider.runLifecycle(
            SendMessageIntent(recipient: Person(displayName: "John"), content: "Hi"))
        #expect(result.phase == .resolve)
        #expect(result.output.outcome == .stop)
        #expect(result.json?["confirm"] == nil)
    }

    @Test func outdoorWorkoutStopsAtConfirm() async throws {
        let intent = StartWorkoutIntent(workoutName: "run", workoutLocationType: .outdoor, isOpenEnded: true)
        let result = await Examples.provider.runLifecycle(intent)
        #expect(result.phase == .confirm)
        #expect(result.json?["confirm"]?["code"] == "failureRequiringAppLaunch")
    }

    /// Schemas/json/interaction.schema.json requires `intent.parameters` in every Interaction, so a request sent
    /// without it (or with null) gets an output intent with an empty parameters object, whatever phase ends it.
    @Test(arguments: [#"{"type":"Echo"}"#, #"{"type":"Echo","parameters":null}"#])
    func outputIntentsAlwaysCarryParameters(intent: String) async throws {
        for phase in [IntentPhase.resolve, .confirm, .handle] {
            let job = try await runJob("Echo", phase, #"{"intent":\#(intent)}"#)
            #expect(job.outcome != .error, "\(phase): \(job.json)")
            #expect(job.json["intent"]?["parameters"] == .object([:]), "\(phase)")
        }
        let result = await Examples.provider.runLifecycle(
            intentType: "Echo", body: Array(#"{"intent":\#(intent)}"#.utf8))
        let json = try #require(result.json)
        #expect(json["intent"]?["parameters"] == .object([:]), "\(result.phase)")
        if let interaction = json["handle"]?["userActivity"]?["userInfo"]?["interaction"] {
            #expect(interaction["intent"]?["parameters"] == .object([:]))
        }
    }

    @Test func lifecycleByBodyReportsErrors() async {
        let result = await Examples.provider.runLifecycle(intentType: "Echo", body: Array("nope".utf8))
        #expect(result.phase == .resolve)
        #expect(result.output.outcome == .error)
        #expect(result.json?["code"] == "bad-body")
    }

    @Test func contextReportsTimeRemaining() throws {
        let context = HandlerContext(jobID: "j", workerName: "w", phase: .handle, timeLeft: .seconds(5))
        let remaining = try #require(context.timeRemaining)
        #expect(remaining > .seconds(4) && remaining <= .seconds(5))
        #expect(HandlerContext().timeRemaining == nil)
    }
}
