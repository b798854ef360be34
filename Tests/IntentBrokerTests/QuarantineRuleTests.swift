import IntentWire
import Testing

@testable import IntentBroker

/// Section 6.7: a resolve or confirm job lost with its worker runs again at most `maxCrashRetries` times, alone on
/// its next worker; the next loss ends the request `worker-crashed` (quarantined) while the type keeps serving.
@Suite struct QuarantineRuleTests {
    /// Two workers of capacity 4; `bad` and `ok` both start on w1, which then crashes (its pool restarts it under
    /// the same routing id: a re-registration).
    private func twoSuspects(_ configuration: BrokerConfiguration = .init()) throws -> CoreHarness {
        var broker = try CoreHarness(configuration)
        broker.register("w1", capacity: 4)
        broker.send("bad", phase: .confirm)
        broker.send("ok", phase: .confirm)
        broker.register("w2", capacity: 4)
        #expect(broker.jobIDs("w1") == ["bad", "ok"])
        broker.jobs["w1"] = nil
        broker.register("w1", capacity: 4)  // crashed and restarted
        return broker
    }

    @Test func aRequestWhoseWorkersAreLostTwiceEndsWorkerCrashedWhileTheTypeGoesOn() throws {
        var broker = try twoSuspects()
        // Each suspect runs alone on a worker of its own.
        let badWorker = try #require(["w1", "w2"].first { broker.jobIDs($0) == ["bad"] })
        let okWorker = badWorker == "w1" ? "w2" : "w1"
        #expect(broker.jobIDs(okWorker) == ["ok"])
        #expect(broker.core.statistics.jobsRedispatched == 2)
        // The second crash is bad's own.
        broker.jobs[badWorker] = nil
        broker.register(badWorker, capacity: 4)
        #expect(broker.endings(of: "bad").map(\.code) == ["worker-crashed"])
        #expect(broker.endings(of: "bad").first?.phase == "confirm")
        #expect(broker.core.statistics.requestsQuarantined == 1)
        #expect(broker.delivered.filter { $0.request == "bad" }.count == 2)  // the first run and one retry
        // The innocent suspect ends normally, and new requests of the type run.
        broker.answer(okWorker)
        #expect(broker.endings(of: "ok").map(\.status) == [.final])
        broker.send("next", phase: .confirm)
        #expect(broker.endings(of: "next").isEmpty)
        broker.answer(broker.delivered.last!.worker)
        #expect(broker.endings(of: "next").map(\.status) == [.final])
    }

    @Test func aWorkerRunningASuspectTakesNoOtherJobUntilItIsAnswered() throws {
        var broker = try twoSuspects()
        // Both workers isolate a suspect: a new request waits, though both have three free slots.
        broker.send("new", phase: .resolve)
        #expect(broker.queued == 1)
        let okWorker = try #require(["w1", "w2"].first { broker.jobIDs($0) == ["ok"] })
        broker.answer(okWorker)
        #expect(broker.queued == 0)
        #expect(broker.jobIDs(okWorker) == ["new"])
        // Not a suspect: its worker takes more than one such job again.
        broker.send("new2", phase: .resolve)
        #expect(broker.jobIDs(okWorker) == ["new", "new2"])
    }

    @Test func withNoRetriesTheFirstLossEndsTheRequest() throws {
        var configuration = BrokerConfiguration()
        configuration.maxCrashRetries = 0
        let broker = try twoSuspects(configuration)
        #expect(broker.endings(of: "bad").map(\.code) == ["worker-crashed"])
        #expect(broker.endings(of: "ok").map(\.code) == ["worker-crashed"])
        #expect(broker.core.statistics.requestsQuarantined == 2)
        #expect(broker.core.statistics.jobsRedispatched == 0)
    }

    @Test func aWorkerThatSaysDisconnectLeavesNoSuspects() throws {
        var configuration = BrokerConfiguration()
        configuration.maxCrashRetries = 0
        var broker = try CoreHarness(configuration)
        broker.register("w1", capacity: 2)
        broker.register("w2", capacity: 2)
        broker.send("r", phase: .resolve)
        let first = broker.delivered[0].worker
        broker.worker(first, sends: .disconnect)
        #expect(broker.endings(of: "r").isEmpty)
        #expect(broker.core.statistics.requestsQuarantined == 0)
        broker.answer(first == "w1" ? "w2" : "w1")
        #expect(broker.endings(of: "r").map(\.status) == [.final])
    }

    @Test func aFrozenWorkerDeclaredDeadCountsAsALoss() throws {
        var configuration = BrokerConfiguration(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3)
        configuration.maxCrashRetries = 0
        var broker = try CoreHarness(configuration)
        broker.register("w1")
        broker.send("spin", phase: .resolve, deadlineMs: 10_000)
        broker.advance(ms: 500)
        #expect(broker.endings(of: "spin").map(\.code) == ["worker-crashed"])
    }
}
