import ConciergeJSON
import IntentKit
import Testing

/// Cancellation reaches handlers (`Schemas/PROTOCOL.md` section 5.13): a job run in a task that is cancelled, whose
/// handler stops by throwing `CancellationError`, is answered `cancelled`; a handler that finishes anyway is answered
/// with its result; a `CancellationError` without a cancellation is an ordinary failure. Events are ordered by
/// waiting for the handler to report that it started, never by sleeping.
@Suite(.timeLimit(.minutes(2))) struct CancellationTests {
    static let cancelledBody: JSONValue = [
        "code": "cancelled", "message": "the handler stopped: the job was cancelled",
    ]

    static func body(_ behaviour: String, in phase: String = "handle") -> [UInt8] {
        Array(#"{"intent":{"type":"Stall","parameters":{"behaviour":"\#(behaviour)","phase":"\#(phase)"}}}"#.utf8)
    }

    /// Runs one phase in a task, waits until the handler reached its stalling point, cancels the task, and returns
    /// the job's output.
    static func runAndCancel(_ behaviour: String, phase: IntentPhase, probe: StallProbe) async -> JobOutput {
        let provider = HandlerProvider.stall(probe)
        let body = body(behaviour, in: phase.rawValue)
        let job = Task {
            await provider.run(intentType: "Stall", phase: phase, body: body, context: HandlerContext(jobID: "j"))
        }
        await probe.waitUntilStarted()
        job.cancel()
        return await job.value
    }

    @Test func aCancelledHandleThatStopsForItIsAnsweredCancelled() async throws {
        let output = await Self.runAndCancel("sleep", phase: .handle, probe: StallProbe())
        #expect(output.outcome == .cancelled)
        #expect(output.json == Self.cancelledBody)
    }

    @Test(arguments: [IntentPhase.resolve, .confirm])
    func aCancelledResolveOrConfirmThatStopsForItIsAnsweredCancelled(phase: IntentPhase) async throws {
        let output = await Self.runAndCancel("sleep", phase: phase, probe: StallProbe())
        #expect(output.outcome == .cancelled, "\(phase)")
        #expect(output.json == Self.cancelledBody, "\(phase)")
    }

    @Test func aHandlerThatIgnoresTheCancellationIsAnsweredWithItsResponse() async throws {
        let output = await Self.runAndCancel("ignore", phase: .handle, probe: StallProbe())
        #expect(output.outcome == .stop)
        let handle = try #require(output.json?["handle"])
        #expect(handle["code"] == "success")
        #expect(handle["data"] == ["done": true])
    }

    @Test func withTaskCancellationHandlersOnCancelRunsAndTheJobIsCancelled() async throws {
        let probe = StallProbe()
        let output = await Self.runAndCancel("onCancel", phase: .handle, probe: probe)
        #expect(probe.onCancelRan)
        #expect(output.outcome == .cancelled)
        #expect(output.json == Self.cancelledBody)
    }

    @Test func aCancellationErrorWithoutACancellationKeepsTheUsualFailures() async throws {
        let provider = HandlerProvider.stall(StallProbe())
        let handle = await provider.run(
            intentType: "Stall", phase: .handle, body: Self.body("throw"), context: HandlerContext())
        #expect(handle.outcome == .stop)
        #expect(handle.json?["handle"]?["code"] == "failure")
        #expect(handle.json?["handle"]?["message"]?.stringValue?.contains("CancellationError") == true)
        let confirm = await provider.run(
            intentType: "Stall", phase: .confirm, body: Self.body("throw", in: "confirm"), context: HandlerContext())
        #expect(confirm.outcome == .stop)
        #expect(confirm.json?["confirm"]?["code"] == "failure")
        let resolve = await provider.run(
            intentType: "Stall", phase: .resolve, body: Self.body("throw", in: "resolve"), context: HandlerContext())
        #expect(resolve.outcome == .error)
        #expect(resolve.json?["code"] == "handler-failed")
    }

    @Test func aJobCancelledBeforeItsHandlerWasMadeStopsWithoutRunningIt() async throws {
        let probe = StallProbe()
        let provider = HandlerProvider.stall(probe)
        let body = Self.body("none")
        let job = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await provider.run(intentType: "Stall", phase: .handle, body: body, context: HandlerContext())
        }
        let output = await job.value
        #expect(output.outcome == .cancelled)
        #expect(output.json == Self.cancelledBody)
        #expect(probe.handlersMade == 0)
    }

    @Test func theInProcessLifecycleStopsAtACancelledPhase() async throws {
        let probe = StallProbe()
        let provider = HandlerProvider.stall(probe)
        let body = Self.body("sleep", in: "confirm")
        let lifecycle = Task { await provider.runLifecycle(intentType: "Stall", body: body) }
        await probe.waitUntilStarted()
        lifecycle.cancel()
        let result = await lifecycle.value
        #expect(result.phase == .confirm)
        #expect(result.output.outcome == .cancelled)
        #expect(result.json == Self.cancelledBody)
        #expect(probe.handlersMade == 2)  // resolve and confirm; handle never ran
    }
}
