import IntentWire
import Testing

@testable import IntentBroker

/// ``BrokerCore/snapshot(now:)``: what metrics gauges and `CIPW02 STATS` report.
@Suite struct SnapshotTests {
    @Test func queuesOldestWaitsWorkersAndCapacityAreReportedPerIntentType() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2, types: ["A"])
        broker.register("w2", capacity: 1, types: ["A", "B"])
        broker.send("a1", type: "A")
        broker.send("a2", type: "A")
        broker.send("a3", type: "A")
        broker.advance(ms: 5)
        broker.send("a4", type: "A")
        broker.advance(ms: 20)
        var snapshot = broker.core.snapshot(now: broker.now)
        #expect(snapshot.requestsInFlight == 4)
        #expect(snapshot.queued == 1)
        let a = try #require(snapshot.intentTypes.first { $0.name == "A" })
        #expect(a.queueDepth == 1)
        #expect(a.oldestAgeNanoseconds == 20_000_000)
        #expect(a.workers == 2 && a.capacity == 3 && a.capacityUsed == 3 && a.capacityFree == 0)
        let b = try #require(snapshot.intentTypes.first { $0.name == "B" })
        #expect(b.queueDepth == 0 && b.oldestAgeNanoseconds == 0 && b.capacityFree == 0)
        #expect(snapshot.workers.map(\.name) == ["w1", "w2"])
        #expect(snapshot.workers.map(\.jobs) == [2, 1])
        #expect(snapshot.capacityUsed == 3 && snapshot.capacityFree == 0 && snapshot.readyWorkers == 2)

        // w1 answers: it takes the queued a4 (the queue empties); then it drains.
        broker.answer("w1")
        broker.worker("w1", sends: .drain)
        snapshot = broker.core.snapshot(now: broker.now)
        #expect(snapshot.queued == 0 && snapshot.requestsInFlight == 3)
        #expect(snapshot.intentTypes.first { $0.name == "A" }?.oldestAgeNanoseconds == 0)
        #expect(snapshot.drainingWorkers == 1 && snapshot.readyWorkers == 1)
        #expect(snapshot.capacityFree == 0)
        broker.answer("w2")
        snapshot = broker.core.snapshot(now: broker.now)
        #expect(snapshot.capacityFree == 1)
        #expect(snapshot.intentTypes.first { $0.name == "B" }?.capacityFree == 1)
    }
}
