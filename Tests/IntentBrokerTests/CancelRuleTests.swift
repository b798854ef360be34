import IntentWire
import Testing

@testable import IntentBroker

/// The broker core's cancellation rules (PROTOCOL.md 4.10.2) and what it sends version-02 workers (5.13), driven
/// step by step without sockets.
@Suite struct CancelRuleTests {
    static let payment = #"{"intent":{"type":"Echo","parameters":{"text":"pay 5"}}}"#
    static let cancelledBody = #"{"code":"cancelled","message":"the handler stopped"}"#

    func record(_ broker: borrowing CoreHarness, key: String) -> IdempotencyStore<ResultStore<[UInt8]>.Result>.Record? {
        broker.core.idempotency.records[
            IdempotencyScope(identity: [], intentType: Array("Echo".utf8), key: Array(key.utf8))]
    }

    @Test func aQueuedRequestEndsCancelledAtOnceAndNeverReachesAWorker() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("busy-one")
        broker.send("a")
        #expect(broker.queued == 1)
        broker.cancel("a")
        let ending = try #require(broker.endings(of: "a").first)
        #expect(ending.code == "cancelled" && ending.phase == "handle")
        #expect(broker.queued == 0)
        broker.answer("w1")
        #expect(broker.delivered.map(\.request) == ["busy-one"])
        #expect(broker.core.statistics.cancelledRequests == 1)
    }

    @Test func aRunningJobIsCancelledOnItsWorkerAndTheWorkersAnswerEndsTheRequest() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a")
        broker.cancel("a")
        #expect(broker.cancels(to: "w1") == ["a"])
        #expect(broker.endings(of: "a").isEmpty)  // the worker's answer ends it
        broker.cancel("a")  // a second CANCEL changes nothing
        #expect(broker.cancels(to: "w1") == ["a"])
        broker.answer("w1", outcome: .cancelled, body: Self.cancelledBody)
        let endings = broker.endings(of: "a")
        #expect(endings.count == 1)
        #expect(endings.first?.status == .error && endings.first?.body == Self.cancelledBody)
    }

    @Test func aHandlerThatFinishedFirstGivesItsFinalReply() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a")
        broker.cancel("a")
        broker.answer("w1", outcome: .stop, body: #"{"paid":true}"#)
        let ending = try #require(broker.endings(of: "a").first)
        #expect(ending.status == .final && ending.body == #"{"paid":true}"#)
    }

    @Test func aSilentWorkerGetsTheCancelGracePeriodThenTheRequestEndsCancelled() throws {
        var broker = try CoreHarness(.init(hardLimit: .seconds(60), cancelGracePeriod: .milliseconds(500)))
        broker.register("w1", version: 2)
        broker.send("a", deadlineMs: 30_000)
        broker.cancel("a")
        broker.advance(ms: 499)
        #expect(broker.endings(of: "a").isEmpty)
        broker.advance(ms: 1)
        let ending = try #require(broker.endings(of: "a").first)
        #expect(ending.code == "cancelled" && ending.body.contains("cancel grace period"))
        // The job keeps its slot until the worker answers it.
        broker.send("b", deadlineMs: 30_000)
        #expect(broker.queued == 1)
        broker.answer("w1", request: "a", outcome: .cancelled, body: Self.cancelledBody)
        #expect(broker.jobIDs("w1") == ["b"])
        #expect(broker.endings(of: "a").count == 1)
    }

    @Test func aVersion1WorkerCannotBeToldSoTheRequestEndsAtOnceAndTheJobKeepsItsSlot() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 1)
        broker.send("a", deadlineMs: 30_000)
        broker.cancel("a")
        #expect(broker.cancels(to: "w1").isEmpty)
        #expect(broker.endings(of: "a").first?.code == "cancelled")
        broker.send("b", deadlineMs: 30_000)
        #expect(broker.queued == 1)
        broker.answer("w1", request: "a")
        #expect(broker.jobIDs("w1") == ["b"])
    }

    @Test func aLifecycleCancelledWhileAPhaseRunsGoesNoFurther() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a", phase: .lifecycle)
        #expect(broker.delivered.map(\.phase) == [.resolve])
        broker.cancel("a")
        broker.answer("w1", outcome: .continue, body: #"{"resolved":1}"#)
        let ending = try #require(broker.endings(of: "a").first)
        #expect(ending.code == "cancelled" && ending.body.contains("after its resolve phase"))
        #expect(broker.delivered.map(\.phase) == [.resolve])
    }

    @Test func aLifecycleQueuedBetweenPhasesEndsAtOnce() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a", phase: .lifecycle, deadlineMs: 30_000)
        broker.blocked.insert("w1")  // its confirm job cannot go out: it waits in the queue
        broker.answer("w1", outcome: .continue, body: #"{"resolved":1}"#)
        #expect(broker.queued == 1)
        broker.cancel("a")
        let ending = try #require(broker.endings(of: "a").first)
        #expect(ending.code == "cancelled" && ending.phase == "confirm")
        #expect(broker.queued == 0)
    }

    @Test func theHardLimitCancelsTheJobOnAVersion2Worker() throws {
        var broker = try CoreHarness(.init(defaultDeadline: .seconds(1), hardLimit: .seconds(2)))
        broker.register("w1", version: 2)
        broker.register("old", types: ["Old"], version: 1)
        broker.send("a")
        broker.send("b", type: "Old")
        broker.advance(ms: 2000)
        #expect(broker.endings(of: "a").first?.code == "timeout")
        #expect(broker.endings(of: "b").first?.code == "timeout")
        #expect(broker.cancels(to: "w1") == ["a"])
        #expect(broker.cancels(to: "old").isEmpty)
    }

    @Test func jobsForVersion2WorkersCarryTheKeyAndTheAttemptOfHandleJobsOnly() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4, version: 2)
        broker.send("a", phase: .lifecycle, body: Self.payment, key: "k-1")
        broker.answer("w1", outcome: .continue, body: Self.payment)
        broker.answer("w1", outcome: .continue, body: Self.payment)
        let handle = try #require(broker.jobs["w1"]?.first)
        #expect(handle.phase == .handle && handle.version == 2)
        #expect(handle.idempotencyKey == Array("k-1".utf8) && handle.attempt == 1)
        broker.send("plain", body: Self.payment)
        let plain = try #require(broker.jobs["w1"]?.last)
        #expect(plain.idempotencyKey == nil && plain.attempt == 1)
    }

    @Test func aCleanStopLetsTheNextAttemptRunAtOnceWithTheNextNumber() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2, version: 2)
        broker.send("a", body: Self.payment, key: "k")
        broker.cancel("a")
        broker.answer("w1", outcome: .cancelled, body: Self.cancelledBody)
        broker.send("retry", body: Self.payment, key: "k")
        let job = try #require(broker.jobs["w1"]?.first)
        #expect(broker.requestID(of: job) == "retry" && job.attempt == 2)
        broker.answer("w1", body: #"{"paid":true}"#)
        #expect(broker.endings(of: "retry").first?.status == .final)
        #expect(record(broker, key: "k")?.attempts == 2)
    }

    @Test func anUnansweredCancelLeavesTheOutcomeUnknownAndRetriesWaitForTheWorker() throws {
        var broker = try CoreHarness(.init(cancelGracePeriod: .milliseconds(100)))
        broker.register("w1", capacity: 2, version: 2)
        broker.send("a", deadlineMs: 30_000, body: Self.payment, key: "k")
        broker.cancel("a")
        broker.advance(ms: 100)
        #expect(broker.endings(of: "a").first?.code == "cancelled")
        broker.send("retry-1", body: Self.payment, key: "k")
        #expect(broker.endings(of: "retry-1").first?.code == "busy")
        broker.answer("w1", request: "a", outcome: .stop, body: #"{"paid":true}"#)  // late: it did pay
        broker.send("retry-2", body: Self.payment, key: "k")
        let job = try #require(broker.jobs["w1"]?.first)
        #expect(broker.requestID(of: job) == "retry-2" && job.attempt == 2)
    }

    @Test func cancellingAnyRequestOfAKeyCancelsTheOperationForAllOfThem() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a", body: Self.payment, key: "k")
        broker.send("again", client: "c2", body: Self.payment, key: "k")  // attached
        broker.cancel("again", client: "c2")
        #expect(broker.cancels(to: "w1") == ["a"])
        broker.answer("w1", outcome: .cancelled, body: Self.cancelledBody)
        #expect(broker.endings(of: "a").first?.body == Self.cancelledBody)
        #expect(broker.endings(of: "again", client: "c2").first?.body == Self.cancelledBody)
    }

    @Test func aCancelForARequestNotInFlightIsAnsweredAsStatusWould() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.cancel("never")
        let unknown = try #require(broker.replies.last)
        #expect(unknown.command == .status && unknown.code == "unknown-request")
        broker.send("done")
        broker.answer("w1", body: #"{"ok":1}"#)
        broker.cancel("done")
        let stored = try #require(broker.replies.last)
        #expect(stored.command == .status && stored.status == .final && stored.body == #"{"ok":1}"#)
        #expect(broker.cancels(to: "w1").isEmpty)
    }

    @Test func withCurveTheSameKeyFindsItsRequestFromAnotherConnectionAndNoOtherKeyDoes() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 2)
        broker.send("a", client: "conn-1", identity: "alice")
        broker.send("q", client: "conn-1", identity: "alice")  // queued
        broker.cancel("q", client: "conn-2", identity: "mallory")
        #expect(broker.replies.last?.code == "unknown-request")
        broker.cancel("q", client: "conn-2", identity: "alice")
        #expect(broker.endings(of: "q", client: "conn-1").first?.code == "cancelled")
        broker.cancel("a", client: "conn-3", identity: "alice")
        #expect(broker.cancels(to: "w1") == ["a"])
    }
}
