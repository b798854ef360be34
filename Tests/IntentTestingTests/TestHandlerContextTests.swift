import IntentKit
import IntentTesting
import Synchronization
import Testing

/// A test intent whose handler reports what its context held in each phase, and whose handle waits until it is
/// cancelled (then stops, or answers anyway when `answersWhenCancelled` is set).
struct ProbeIntent: Intent, Hashable {
    static let intentType = "Probe"
    static let parameters: [IntentParameter<ProbeIntent>] = [.init("answersWhenCancelled", \.answersWhenCancelled)]
    var identifier: String?
    var answersWhenCancelled: Bool?
}

/// Tells the test that a handle started, so it can cancel a running handle without sleeping.
final class HandleStarted: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    func signal() { continuation.yield() }

    func wait() async {
        for await _ in stream { return }
    }
}

struct ProbeHandler: IntentHandler {
    let started: HandleStarted

    func confirm(intent: ProbeIntent, context: HandlerContext) async throws -> ConfirmResponse<ProbeIntent> {
        ConfirmResponse(code: .ready, data: Self.seen(context))
    }

    func handle(intent: ProbeIntent, context: HandlerContext) async throws -> HandleResponse<ProbeIntent> {
        var data = Self.seen(context)
        if intent.answersWhenCancelled != nil {
            started.signal()
            if intent.answersWhenCancelled == true {
                try? await Task.sleep(for: .seconds(600))
            } else {
                try await Task.sleep(for: .seconds(600))
            }
        }
        data["cancelled"] = .bool(Task.isCancelled)
        return HandleResponse(code: .success, data: data)
    }

    static func seen(_ context: HandlerContext) -> JSONObject {
        [
            "key": context.idempotencyKey.map(JSONValue.string) ?? .null, "attempt": .int(Int64(context.attempt)),
            "job": .string(context.jobID), "phase": .string(context.phase.rawValue),
            "hasDeadline": .bool(context.deadline != nil),
        ]
    }
}

@Suite(.timeLimit(.minutes(1))) struct TestHandlerContextTests {
    static func provider(_ started: HandleStarted = HandleStarted()) -> HandlerProvider {
        var provider = HandlerProvider()
        provider.register { ProbeHandler(started: started) }
        return provider
    }

    @Test func theHandleSeesTheKeyAndAttemptAndResolveAndConfirmDoNotAsFromABroker() async throws {
        let context = TestHandlerContext(idempotencyKey: "pay-1", attempt: 2, timeLeft: .seconds(3), jobID: "j-7")
        var conversation = IntentConversation(provider: Self.provider(), intent: ProbeIntent(), context: context)
        let turn = try await conversation.send()
        #expect(
            turn.confirm?.data == ["key": nil, "attempt": 1, "job": "j-7", "phase": "confirm", "hasDeadline": true])
        #expect(
            turn.handle?.data == [
                "key": "pay-1", "attempt": 2, "job": "j-7", "phase": "handle", "hasDeadline": true, "cancelled": false,
            ])
        #expect(context.handlerContext(for: .resolve).idempotencyKey == nil)
    }

    @Test func aCancelledRunningHandleThatStopsForItEndsTheTurnCancelled() async throws {
        let started = HandleStarted()
        let context = TestHandlerContext(idempotencyKey: "pay-1")
        var conversation = IntentConversation(
            provider: Self.provider(started), intent: ProbeIntent(answersWhenCancelled: false), context: context)
        let canceller = Task {
            await started.wait()
            context.cancellation.cancel()
        }
        let turn = try await conversation.send()
        await canceller.value
        #expect(turn.phase == .handle && turn.outcome == .cancelled)
        #expect(turn.error?.code == .cancelled)
        #expect(conversation.hasEnded)
    }

    @Test func aHandleThatAnswersDespiteTheCancellationReportsSeeingIt() async throws {
        let started = HandleStarted()
        let context = TestHandlerContext()
        var conversation = IntentConversation(
            provider: Self.provider(started), intent: ProbeIntent(answersWhenCancelled: true), context: context)
        let canceller = Task {
            await started.wait()
            context.cancellation.cancel()
        }
        let turn = try await conversation.send()
        await canceller.value
        #expect(turn.outcome == .stop)
        #expect(turn.handle?.data?["cancelled"] == true)
        #expect(context.cancellation.isCancelled)
    }

    @Test func aJobStartedAfterTheCancellationStopsBeforeItsHandlerRuns() async throws {
        let context = TestHandlerContext()
        context.cancellation.cancel()
        let turn = try await context.run(ProbeIntent(), phase: .resolve, on: Self.provider())
        #expect(turn.outcome == .cancelled)
        #expect(turn.error?.message == "the handler stopped: the job was cancelled")
    }
}
