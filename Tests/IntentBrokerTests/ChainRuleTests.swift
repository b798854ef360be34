import IntentWire
import Testing

@testable import IntentBroker

/// Section 5.15: a lifecycle's phases in one job on a `CIPW03` worker, through confirm by default and through
/// handle when the operator allows it, and what a lost worker, a CANCEL, a deadline and a stop do to such a job.
@Suite struct ChainRuleTests {
    static func configuration(chainingThrough end: RequestPhase) -> BrokerConfiguration {
        var configuration = BrokerConfiguration()
        configuration.lifecycleChainEnd = end
        return configuration
    }

    /// A broker chaining through handle, whose one version-03 worker of capacity 1 holds the lifecycle job of
    /// `request`, with a resolve request "next" queued behind it for the slot.
    static func oneSlotChainingThroughHandle(holding request: String) throws -> CoreHarness {
        var broker = try CoreHarness(configuration(chainingThrough: .handle))
        broker.register("w1", capacity: 1, version: 3)
        broker.send(request, phase: .lifecycle)
        broker.send("next", phase: .resolve)
        return broker
    }

    @Test func byDefaultResolveAndConfirmRunInOneJobAndHandleInAJobOfItsOwn() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 3)
        broker.send("pay", phase: .lifecycle)
        let first = try #require(broker.jobs["w1"]?.first)
        #expect(first.phase == .resolve && first.lastPhase == .confirm)
        broker.answer("w1", outcome: .continue, body: #"{"resolve":{}}"#)
        // The worker went on with confirm itself: no JOB for it, the same job still holds the slot.
        #expect(broker.delivered.map(\.phase) == [.resolve])
        #expect(broker.core.workers.values.first?.jobs.count == 1)
        #expect(broker.core.requests.values.first?.phase == .confirm)
        broker.answer("w1", outcome: .continue, body: #"{"resolve":{},"confirm":{}}"#)
        #expect(broker.delivered.map(\.phase) == [.resolve, .handle])
        let handle = try #require(broker.jobs["w1"]?.first)
        #expect(handle.lastPhase == .handle && handle.body == Array(#"{"resolve":{},"confirm":{}}"#.utf8))
        broker.answer("w1", body: #"{"handle":{}}"#)
        let ending = try #require(broker.endings(of: "pay").first)
        #expect(ending.status == .final && ending.phase == "handle" && ending.body == #"{"handle":{}}"#)
        #expect(broker.core.statistics.chainedPhases == 1)
        #expect(broker.core.statistics.jobsDispatched == 2)
    }

    @Test func throughHandleTheWholeLifecycleIsOneJobAndItsSlotIsTakenUntilTheLastResult() throws {
        var broker = try Self.oneSlotChainingThroughHandle(holding: "pay")
        #expect(try #require(broker.jobs["w1"]?.first).lastPhase == .handle)
        broker.answer("w1", outcome: .continue)
        broker.answer("w1", outcome: .continue)
        #expect(broker.jobIDs("w1") == ["pay"])
        #expect(broker.queued == 1)  // the slot stays taken through every phase
        broker.answer("w1", body: #"{"handle":{}}"#)
        #expect(broker.endings(of: "pay").map(\.phase) == ["handle"])
        #expect(broker.chained.map(\.phase) == [.confirm, .handle])
        #expect(broker.delivered.map(\.request) == ["pay", "next"])
        #expect(broker.core.statistics.chainedPhases == 2)
    }

    @Test func aStopEndsTheChainAndItsJob() throws {
        var broker = try Self.oneSlotChainingThroughHandle(holding: "msg")
        broker.answer("w1", outcome: .stop, body: #"{"resolve":{"recipient":{"kind":"disambiguation"}}}"#)
        #expect(broker.endings(of: "msg").map(\.phase) == ["resolve"])
        #expect(broker.jobIDs("w1") == ["next"])
    }

    @Test func olderWorkersKeyedRequestsAndJournalsGetNoChainThroughHandle() throws {
        var broker = try CoreHarness(Self.configuration(chainingThrough: .handle))
        broker.register("v2", capacity: 4, version: 2)
        broker.send("a", phase: .lifecycle)
        #expect(try #require(broker.jobs["v2"]?.first).lastPhase == .resolve)
        broker.worker("v2", sends: .drain)
        broker.register("v3", capacity: 4, version: 3)
        broker.send("keyed", phase: .lifecycle, key: "k1")
        broker.send("resolve only", phase: .resolve)
        #expect(broker.jobs["v3"]?.map(\.lastPhase) == [.confirm, .resolve])

        var journaled = try CoreHarness(Self.configuration(chainingThrough: .handle), journaling: true)
        journaled.register("v3", version: 3)
        journaled.send("a", phase: .lifecycle)
        #expect(try #require(journaled.jobs["v3"]?.first).lastPhase == .confirm)

        var off = try CoreHarness(Self.configuration(chainingThrough: .resolve))
        off.register("v3", version: 3)
        off.send("a", phase: .lifecycle)
        #expect(try #require(off.jobs["v3"]?.first).lastPhase == .resolve)
    }

    @Test func aLostWorkerInAChainThroughConfirmHasItsCurrentPhaseRunAgainElsewhere() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 3)
        broker.send("pay", phase: .lifecycle)
        broker.answer("w1", outcome: .continue, body: #"{"resolve":{}}"#)
        broker.register("w2", version: 3)
        broker.worker("w1", sends: .disconnect)
        // Confirm again, on the resolve output, as a job of its own (its chain ends at confirm anyway).
        let again = try #require(broker.jobs["w2"]?.first)
        #expect(again.phase == .confirm && again.body == Array(#"{"resolve":{}}"#.utf8))
        #expect(broker.core.statistics.jobsRedispatched == 1)
        #expect(broker.endings(of: "pay").isEmpty)
    }

    @Test func aLostWorkerInAChainThroughHandleEndsTheRequestWorkerLostInAnyPhase() throws {
        var broker = try CoreHarness(Self.configuration(chainingThrough: .handle))
        broker.register("w1", version: 3)
        broker.register("w2", version: 3)
        broker.send("pay", phase: .lifecycle)
        let worker = broker.delivered[0].worker
        broker.worker(worker, sends: .disconnect)
        let ending = try #require(broker.endings(of: "pay").first)
        #expect(ending.code == "worker-lost" && ending.phase == "resolve")
        #expect(ending.body.contains("may have started handle"))
        #expect(broker.delivered.count == 1)
    }

    @Test func aCancelDuringAChainEndsTheRequestAndTheSlotWaitsForTheWorkersLastResult() throws {
        var broker = try Self.oneSlotChainingThroughHandle(holding: "pay")
        broker.cancel("pay")
        #expect(broker.cancels(to: "w1") == ["pay"])
        // The resolve handler finished first: the chain goes no further, and the request ends at once.
        broker.answer("w1", outcome: .continue)
        let ending = try #require(broker.endings(of: "pay").first)
        #expect(ending.code == "cancelled" && ending.body.contains("after its resolve phase"))
        #expect(broker.queued == 1)
        // The worker answers the next phase `cancelled`, the job's last RESULT: only then is the slot free.
        broker.answer("w1", outcome: .cancelled, body: #"{"code":"cancelled","message":"stopped"}"#)
        #expect(broker.jobIDs("w1") == ["next"])
        #expect(broker.endings(of: "pay").count == 1)
        #expect(broker.core.statistics.strayResults == 0)
    }

    @Test func aProgressReplyNamesThePhaseTheChainIsIn() throws {
        var broker = try CoreHarness(Self.configuration(chainingThrough: .handle))
        broker.register("w1", version: 3)
        broker.send("pay", phase: .lifecycle, deadlineMs: 100)
        broker.answer("w1", outcome: .continue)
        broker.advance(ms: 100)
        let progress = try #require(broker.replies(to: "pay").first { $0.status == .progress })
        #expect(progress.phase == "confirm")
    }

    @Test func aResultAfterTheLastPhaseIsStray() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 3)
        broker.send("pay", phase: .lifecycle)
        let job = try #require(broker.jobs["w1"]?.first)
        broker.answer("w1", outcome: .continue)
        broker.answer("w1", outcome: .stop)  // confirm needs the user: the job and the request end
        #expect(broker.endings(of: "pay").map(\.phase) == ["confirm"])
        // One more RESULT for the same job id (a worker that miscounted): dropped and counted, nothing else.
        broker.jobs["w1"] = [job]
        broker.answer("w1", outcome: .continue)
        #expect(broker.core.statistics.strayResults == 1)
        #expect(broker.endings(of: "pay").count == 1)
    }
}
