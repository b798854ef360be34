import IntentWire
import Testing

@testable import IntentBroker

/// Section 6.7 (lost jobs), 7.1 (silent workers), 5.10 (re-registration) and 8.1 (drain).
@Suite struct LostWorkerRuleTests {
    @Test func resolveAndConfirmJobsOfALostWorkerRunAgainElsewhereAheadOfTheQueue() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2)
        broker.register("w2", capacity: 1)
        broker.send("r1", phase: .resolve)  // w1
        broker.send("busy", phase: .resolve)  // w2
        broker.send("c1", phase: .confirm)  // w1
        broker.send("waiting", phase: .resolve)  // queued
        #expect(broker.jobIDs("w1") == ["r1", "c1"])
        broker.worker("w1", sends: .disconnect)
        // Both lost jobs go before the request that was already waiting.
        broker.answer("w2")
        broker.answer("w2")
        broker.answer("w2")
        #expect(broker.delivered.filter { $0.worker == "w2" }.map(\.request) == ["busy", "r1", "c1", "waiting"])
        #expect(broker.core.statistics.jobsRedispatched == 2)
        for id in ["r1", "c1", "busy"] { #expect(broker.endings(of: id).map(\.status) == [.final]) }
    }

    @Test func aHandleJobOfALostWorkerEndsWithWorkerLostAndIsNeverSentAgain() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.register("w2")
        broker.send("pay")
        let worker = broker.delivered[0].worker
        broker.worker(worker, sends: .disconnect)
        #expect(broker.endings(of: "pay").map(\.code) == ["worker-lost"])
        #expect(broker.endings(of: "pay").first?.phase == "handle")
        #expect(broker.delivered.filter { $0.request == "pay" }.count == 1)
    }

    @Test func jobsBookedButNeverSentToAnUnreachableWorkerGoElsewhereEvenHandleJobs() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4)
        broker.register("w2", capacity: 4)
        broker.unreachable = ["w1"]
        broker.send("h1")
        #expect(broker.endings(of: "h1").isEmpty)
        #expect(broker.jobIDs("w2") == ["h1"])
        #expect(broker.core.workers.count == 1)
        #expect(broker.core.statistics.jobsDispatched == 1)
    }

    @Test func aSilentWorkerIsDeclaredDeadAfterLivenessTimesTheInterval() throws {
        var broker = try CoreHarness(.init(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3))
        broker.register("w1")
        broker.register("w2")
        broker.send("h", deadlineMs: 10_000)
        broker.send("r", phase: .resolve, deadlineMs: 10_000)
        let handleWorker = broker.delivered[0].worker
        let other = handleWorker == "w1" ? "w2" : "w1"
        for _ in 0..<5 {
            broker.advance(ms: 100)
            broker.worker(other, sends: .heartbeat)
        }
        #expect(broker.core.workers.count == 1)
        #expect(broker.endings(of: "h").map(\.code) == ["worker-lost"])
        #expect(broker.controls.contains { $0.worker == other && $0.control == .heartbeat })
        // A message from the dead worker now gets DISCONNECT, so it registers again.
        broker.worker(handleWorker, sends: .unregistered(.heartbeat))
        #expect(broker.controls.last.map { $0.worker == handleWorker && $0.control == .disconnect } == true)
    }

    @Test func aRoutingIDRegisteringAgainLosesTheOldRegistrationsJobs() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("h")
        broker.register("w1")
        #expect(broker.endings(of: "h").map(\.code) == ["worker-lost"])
        #expect(broker.core.workers.count == 1)
        #expect(broker.core.statistics.workersRegistered == 2)
    }

    @Test func aResultFromAnEarlierJobOrAnotherWorkerIsDroppedAndCounted() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.register("w2", capacity: 1)
        broker.send("r", phase: .resolve)
        let job = try #require(broker.jobs[broker.delivered[0].worker]?.first)
        let thief = broker.delivered[0].worker == "w1" ? "w2" : "w1"
        broker.core.workerMessage(
            .result(WorkerResult(jobID: job.jobID, outcome: .stop, bodySize: 1)), from: Array(thief.utf8),
            resultBody: Array("x".utf8), now: broker.now)
        broker.settle()
        #expect(broker.core.statistics.strayResults == 1)
        #expect(broker.endings(of: "r").isEmpty)
    }

    @Test func aDrainingWorkerGetsNoJobAfterTheAcknowledgementButStillServesItsType() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2)
        broker.send("a")
        broker.worker("w1", sends: .drain)
        #expect(broker.controls.last.map { $0.worker == "w1" && $0.control == .drainAcknowledged } == true)
        broker.send("b")  // served (the draining worker still announces the type), so it queues
        #expect(broker.endings(of: "b").isEmpty)
        #expect(broker.queued == 1)
        broker.answer("w1")  // room again, but draining: no job
        #expect(broker.jobIDs("w1").isEmpty)
        broker.register("w2")
        #expect(broker.jobIDs("w2") == ["b"])
    }

    @Test func aMalformedMessageFromARegisteredWorkerKeepsItAlive() throws {
        var broker = try CoreHarness(.init(heartbeatInterval: .milliseconds(100)))
        broker.register("w1")
        broker.advance(ms: 250)
        broker.core.workerMessageRejected(
            routingID: Array("w1".utf8), WorkerMessageError(code: .malformed, message: "bad", check: 6),
            now: broker.now)
        broker.settle()
        broker.advance(ms: 100)
        #expect(broker.core.workers.count == 1)
        #expect(broker.controls.contains { $0.control == .error(.malformed, "bad") })
    }
}
