import IntentWire
import Testing

@testable import IntentBroker

/// Section 6.5: fairness across clients within an intent type. Each client has a lane in the type's queue,
/// the lanes take turns, and when the queue is at a bound the client with the most queued requests pays.
@Suite struct FairnessRuleTests {
    @Test func clientsTakeTurnsWhenAWorkerTakesTheNextJob() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 1)
        broker.send("f0", client: "flood")  // runs
        for index in 1...5 { broker.send("f\(index)", client: "flood") }
        broker.send("t1", client: "trickle")
        broker.send("t2", client: "trickle")
        var order: [String] = []
        for _ in 0..<7 {
            broker.answer("w1")
            order += broker.jobIDs("w1")
        }
        // The flood's lane had its turn first (it was first in), then they alternate until the trickle's is empty.
        #expect(order == ["f1", "t1", "f2", "t2", "f3", "f4", "f5"])
    }

    @Test func aFloodIsShedAtTheBoundAndATrickleIsNeverShed() throws {
        var broker = try CoreHarness(.init(maxQueuedPerIntentType: 10))
        broker.register("w1", capacity: 1)
        var trickle: [String] = []
        var flood: [String] = []
        for round in 0..<40 {
            for index in 0..<25 {
                let id = "f\(round)-\(index)"
                flood.append(id)
                broker.send(id, client: "flood")
            }
            let id = "t\(round)"
            trickle.append(id)
            broker.send(id, client: "trickle")
            broker.answer("w1")
            broker.answer("w1")
        }
        while broker.queued > 0 || !broker.jobIDs("w1").isEmpty { broker.answer("w1") }
        for id in trickle {
            #expect(broker.endings(of: id, client: "trickle").map(\.status) == [.final], "\(id)")
        }
        let floodBusy = flood.filter { broker.endings(of: $0, client: "flood").first?.code == "busy" }.count
        let floodFinal = flood.filter { broker.endings(of: $0, client: "flood").first?.status == .final }.count
        #expect(floodBusy > 800)
        #expect(floodBusy + floodFinal == flood.count)
    }

    @Test func aLightClientsRequestShedsTheHeaviestClientsNewestQueuedRequest() throws {
        var broker = try CoreHarness(.init(maxQueuedPerIntentType: 3))
        broker.register("w1", capacity: 1)
        broker.send("run", client: "heavy")
        for index in 1...3 { broker.send("h\(index)", client: "heavy") }
        broker.send("h4", client: "heavy")  // the heaviest client's own request is refused
        #expect(broker.endings(of: "h4", client: "heavy").first?.code == "busy")
        broker.send("l1", client: "light")  // admitted: h3, the heavy client's newest, is shed at once
        #expect(broker.endings(of: "h3", client: "heavy").first?.code == "busy")
        #expect(broker.endings(of: "l1", client: "light").isEmpty)
        broker.send("l2", client: "light")  // the heavy client has 2, the light one 1: no longer heavier by two
        #expect(broker.endings(of: "l2", client: "light").first?.code == "busy")
        #expect(broker.queued == 3)
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["h1"])
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["l1"])
    }

    @Test func theBrokerWideBoundShedsTheHeaviestClientToo() throws {
        var broker = try CoreHarness(.init(maxQueuedRequests: 4))
        broker.register("w1", capacity: 1)
        for index in 0...4 { broker.send("h\(index)", client: "heavy") }
        broker.send("l1", client: "light")
        #expect(broker.endings(of: "h4", client: "heavy").first?.code == "busy")
        #expect(broker.endings(of: "l1", client: "light").isEmpty)
    }

    @Test func aCurveKeyIsOneClientAcrossConnections() throws {
        var broker = try CoreHarness(.init(maxQueuedPerIntentType: 4))
        broker.register("w1", capacity: 1)
        broker.send("run", client: "c1", identity: "key")
        broker.send("a1", client: "c1", identity: "key")
        broker.send("a2", client: "c2", identity: "key")
        broker.send("a3", client: "c3", identity: "key")
        broker.send("b1", client: "c4")
        broker.send("a4", client: "c5", identity: "key")  // the queue is full; "key" holds 3, c4 one: refused
        #expect(broker.endings(of: "a4", client: "c5").first?.code == "busy")
        broker.answer("w1")
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["b1"])
    }

    @Test func aReDispatchedJobGoesFirstWhateverItsClient() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 1)
        broker.register("w2", capacity: 1)
        broker.send("x", phase: .resolve, client: "a")  // on w1
        broker.send("y", client: "b")  // on w2
        broker.send("b1", client: "b")
        broker.send("a1", client: "a")
        broker.worker("w1", sends: .disconnect)  // x (retriable) goes to the front, then b1 ran ... w2 still busy
        broker.answer("w2")
        #expect(broker.jobIDs("w2") == ["x"])
        broker.answer("w2")
        broker.answer("w2")
        #expect(broker.delivered.map(\.request).suffix(2) == ["b1", "a1"])
    }

    /// A flood has queued more than a light client's short deadline allows at the type's pace; the light client's
    /// first request waits behind one of the flood's, not behind all of them, so it is admitted and served next.
    @Test func aNewClientsShortDeadlineIsCheckedAgainstItsTurnNotTheWholeQueue() throws {
        var broker = DispatchRuleTests.oneWorkerAtTenJobsPerSecond(try CoreHarness())
        // About 10 jobs/s and one running: 20 queued would take about 2 s.
        for index in 11...30 { broker.send("s\(index)", deadlineMs: 60_000) }
        broker.send("light", deadlineMs: 1000, client: "light")
        #expect(broker.endings(of: "light", client: "light").isEmpty)
        #expect(broker.core.statistics.shedRequests == 0)
        broker.answer("w1")  // s10 ends; the flood's head s11 was first in turn
        broker.answer("w1")
        #expect(broker.endings(of: "light", client: "light").isEmpty)
        broker.answer("w1")
        #expect(broker.endings(of: "light", client: "light").map(\.status) == [.final])
        // The same request from the flood's own client waits behind its whole lane and is refused.
        broker.send("late", deadlineMs: 1000)
        #expect(broker.endings(of: "late").first?.code == "busy")
    }

    @Test func thePaceCheckCountsOnlyWhatRoundRobinTakesFirst() throws {
        var queue = RequestQueue()
        let heavy = Array("heavy".utf8)
        let light = Array("light".utf8)
        for index in 0..<100 { queue.enqueue(UInt64(index), client: heavy, ticket: UInt64(index), arrival: 0) }
        #expect(queue.fairPosition(of: heavy) == 101)
        #expect(queue.fairPosition(of: light) == 2)  // a new client: heavy's head, then it
        queue.enqueue(1000, client: light, ticket: 1000, arrival: 0)
        #expect(queue.fairPosition(of: light) == 4)  // heavy's next two and light's own one, then it
        #expect(queue.fairPosition(of: heavy) == 102)
        #expect(queue.consistencyProblems().isEmpty)
        queue.remove(ticket: 1000, client: light)
        queue.remove(ticket: 99, client: heavy)
        #expect(queue.count == 99)
        #expect(queue.heaviest()?.newest == 98)
        #expect(queue.consistencyProblems().isEmpty)
    }
}
