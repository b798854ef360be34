import IntentWire
import Testing

@testable import IntentBroker

/// Section 6.5: load balancing, queueing and the queue bounds.
@Suite struct DispatchRuleTests {
    @Test func jobsGoToTheLeastLoadedWorkerAndIdleWorkersShareTheWork() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4)
        broker.register("w2", capacity: 4)
        for index in 1...4 { broker.send("r\(index)") }
        #expect(broker.jobIDs("w1").count == 2)
        #expect(broker.jobIDs("w2").count == 2)
        // Ties break round-robin: consecutive requests alternate.
        #expect(broker.delivered.map(\.worker) == ["w1", "w2", "w1", "w2"])
    }

    @Test func requestsWaitInArrivalOrderAndAWorkerWithRoomTakesTheOldest() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 1)
        broker.send("a")
        broker.send("b")
        broker.send("c")
        #expect(broker.jobIDs("w1") == ["a"])
        #expect(broker.queued == 2)
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["b"])
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["c"])
        #expect(broker.queued == 0)
        #expect(broker.endings(of: "a").map(\.status) == [.final])
    }

    @Test func aWorkerServingSeveralTypesTakesTheOldestHeadAcrossItsQueues() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 1, types: ["A", "B"])
        broker.send("first", type: "A")
        broker.send("b1", type: "B")
        broker.advance(ms: 1)
        broker.send("a2", type: "A")
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["b1"])
        broker.answer("w1")
        #expect(broker.jobIDs("w1") == ["a2"])
    }

    @Test func theQueueBoundCountsOnlyRequestsReallyWaiting() throws {
        // A drift once seen: a handle job lost with its worker raised the effective --max-queued by one.
        var broker = try CoreHarness(.init(maxQueuedRequests: 1))
        broker.register("A", capacity: 1)
        broker.send("r1")  // runs on A
        broker.send("r2")  // queues
        broker.send("r3")  // busy: the queue is full
        #expect(broker.endings(of: "r3").first?.code == "busy")
        broker.worker("A", sends: .disconnect)  // r1 -> worker-lost
        #expect(broker.endings(of: "r1").first?.code == "worker-lost")
        broker.register("B", capacity: 1)  // takes r2
        #expect(broker.jobIDs("B") == ["r2"])
        broker.send("r4")  // queues
        broker.send("r5")  // busy again
        #expect(broker.queued == 1)
        #expect(broker.endings(of: "r4").isEmpty)
        #expect(broker.endings(of: "r5").first?.code == "busy")
    }

    @Test func requestsShedFromTheQueueNoLongerCountAgainstTheTypeBound() throws {
        var broker = try CoreHarness(.init(maxQueuedPerIntentType: 2))
        broker.register("w1", capacity: 1)
        broker.send("run", deadlineMs: 60_000)
        broker.send("q1", deadlineMs: 100)
        broker.send("q2", deadlineMs: 100)
        broker.send("full", deadlineMs: 100)
        #expect(broker.endings(of: "full").first?.code == "busy")
        broker.advance(ms: 100)  // q1 and q2 never started: shed at their deadline
        #expect(broker.endings(of: "q1").first?.code == "busy")
        #expect(broker.endings(of: "q2").first?.code == "busy")
        #expect(broker.queued == 0)
        broker.send("q3", deadlineMs: 1000)
        broker.send("q4", deadlineMs: 1000)
        #expect(broker.endings(of: "q3").isEmpty && broker.endings(of: "q4").isEmpty)
        #expect(broker.queued == 2)
    }

    /// One worker with room for one job, saturated, and 10 jobs answered over 1 s: about 10 jobs/s (s0…s10 sent, the
    /// last still running, the queue empty).
    static func oneWorkerAtTenJobsPerSecond(_ harness: consuming CoreHarness) -> CoreHarness {
        var broker = harness
        broker.register("w1", capacity: 1)
        broker.send("s0", deadlineMs: 60_000)
        for index in 1...10 {
            broker.send("s\(index)", deadlineMs: 60_000)
            broker.advance(ms: 100)
            broker.answer("w1")
        }
        return broker
    }

    @Test func aTypeThatAnswersSlowlyWhileSaturatedShedsAtArrival() throws {
        var broker = try Self.oneWorkerAtTenJobsPerSecond(CoreHarness())
        // Queue now empty but the worker busy. 10 more queued, then one with a 500 ms deadline: 11 ahead at 10/s.
        for index in 11...20 { broker.send("s\(index)", deadlineMs: 60_000) }
        broker.send("late", deadlineMs: 500)
        let ending = try #require(broker.endings(of: "late").first)
        #expect(ending.code == "busy")
        #expect(ending.body.contains("before its deadline"))
        #expect(broker.core.statistics.shedRequests == 1)
    }

    /// A refusal by pace tells the client how much it may send (section 6.3, rule 2): the measured pace with a tenth
    /// more, split among the clients with queued requests of the type, the refused one included.
    @Test func aRefusalByPaceCarriesTheClientsShareOfThePace() throws {
        var broker = try Self.oneWorkerAtTenJobsPerSecond(CoreHarness())
        for index in 11...20 { broker.send("s\(index)", deadlineMs: 60_000) }
        let pace = broker.core.intentTypes[0].pace.jobsPerSecond
        #expect(pace > 5 && pace < 20, "\(pace)")
        func share(_ clients: Double) -> Int { BrokerCore<[UInt8]>.twoSignificantDigits(pace * 1.1 / clients) }
        // One client queued, and it is the one refused.
        broker.send("late", deadlineMs: 500)
        let alone = try #require(broker.endings(of: "late").first)
        #expect(alone.code == "busy")
        #expect(Pushback.Hint(errorBody: Array(alone.body.utf8)) == Pushback.Hint(rate: share(1), milliseconds: 1000))
        // A second client with a request queued: each gets half.
        broker.send("c2-first", deadlineMs: 60_000, client: "c2")
        broker.send("c2-late", deadlineMs: 150, client: "c2")
        let shared = try #require(broker.endings(of: "c2-late", client: "c2").first)
        #expect(shared.code == "busy")
        #expect(Pushback.Hint(errorBody: Array(shared.body.utf8)) == Pushback.Hint(rate: share(2), milliseconds: 1000))
        // A third client, refused before it has anything queued, counts itself: a third each.
        broker.send("c3-late", deadlineMs: 20, client: "c3")
        let third = try #require(broker.endings(of: "c3-late", client: "c3").first)
        #expect(third.code == "busy")
        #expect(Pushback.Hint(errorBody: Array(third.body.utf8)) == Pushback.Hint(rate: share(3), milliseconds: 1000))
    }

    /// Before any pace is measured there is nothing to share: a refusal at a full queue carries no pushback.
    @Test func aRefusalWithoutAMeasuredPaceCarriesNoPushback() throws {
        var configuration = BrokerConfiguration()
        configuration.maxQueuedPerIntentType = 2
        var broker = try CoreHarness(configuration)
        broker.register("w1", capacity: 1)
        for index in 0..<4 { broker.send("r\(index)", deadlineMs: 60_000) }
        let refused = try #require(broker.endings(of: "r3").first)
        #expect(refused.code == "busy")
        #expect(Pushback.Hint(errorBody: Array(refused.body.utf8)) == nil, "\(refused.body)")
    }

    @Test func aQueueWaitLimitRefusesWhatWouldWaitLongerAndTheRefusalBodyIsReused() throws {
        for limit in [nil, 500] as [Int?] {
            var configuration = BrokerConfiguration()
            configuration.maxQueueWait = limit.map { .milliseconds($0) }
            var broker = try Self.oneWorkerAtTenJobsPerSecond(CoreHarness(configuration))
            // 10 queued: the next would start about 1.1 s from now, well within its 60 s deadline, not within 500 ms.
            for index in 11...20 { broker.send("s\(index)", deadlineMs: 60_000) }
            broker.send("a", deadlineMs: 60_000)
            broker.send("b", deadlineMs: 60_000)
            if limit == nil {
                #expect(broker.endings(of: "a").isEmpty && broker.endings(of: "b").isEmpty)
                #expect(broker.core.statistics.shedRequests == 0)
            } else {
                let a = try #require(broker.endings(of: "a").first)
                let b = try #require(broker.endings(of: "b").first)
                let pace = BrokerCore<[UInt8]>.twoSignificantDigits(broker.core.intentTypes[0].pace.jobsPerSecond)
                #expect(a.code == "busy" && a.body.contains("about \(pace) jobs/s"), "\(a.body)")
                #expect(a.body == b.body)
                #expect(broker.core.statistics.shedRequests >= 2)
            }
        }
    }

    @Test func aStandingQueueIsHeldShortAndABurstAfterItEmptiedMayQueueAgain() throws {
        for standing in [true, false] {
            var configuration = BrokerConfiguration()
            configuration.standingQueueWait = standing ? .milliseconds(20) : nil
            configuration.standingQueueInterval = .seconds(1)
            var broker = try CoreHarness(configuration)
            broker.register("w1", capacity: 1)
            // Five queued behind a running job, then one in and one answered every 100 ms for 2 s (about 10 jobs/s):
            // all would start well within their 60 s deadline, so only the standing-queue rule sheds any.
            for index in 0...5 { broker.send("s\(index)", deadlineMs: 60_000) }
            var firstShed: Int?
            for index in 6...25 {
                broker.advance(ms: 100)
                broker.answer("w1")
                broker.send("s\(index)", deadlineMs: 60_000)
                if firstShed == nil, broker.endings(of: "s\(index)").first?.code == "busy" { firstShed = index }
            }
            if standing {
                // Not before the queue went a whole second without emptying (s15 arrived 1 s after the first wait).
                let shed = try #require(firstShed)
                #expect(shed >= 15)
                #expect(broker.core.statistics.shedRequests > 0)
            } else {
                #expect(firstShed == nil && broker.queued == 5)
            }
            // Once the queue has emptied, a burst may queue again.
            let shedBefore = broker.core.statistics.shedRequests
            for _ in 0..<10 where broker.queued > 0 || !broker.jobIDs("w1").isEmpty {
                broker.advance(ms: 10)
                broker.answer("w1")
            }
            #expect(broker.queued == 0)
            for index in 0..<5 { broker.send("burst\(index)", deadlineMs: 60_000) }
            #expect(broker.queued == 4)
            #expect(broker.core.statistics.shedRequests == shedBefore)
        }
    }

    @Test func aPaceIsNamedWithTwoSignificantDigits() {
        typealias Core = BrokerCore<[UInt8]>
        #expect(Core.twoSignificantDigits(0.4) == 0)
        #expect(Core.twoSignificantDigits(9.6) == 10)
        #expect(Core.twoSignificantDigits(87) == 87)
        #expect(Core.twoSignificantDigits(12_345) == 12_000)
        #expect(Core.twoSignificantDigits(44_871) == 45_000)
        #expect(Core.twoSignificantDigits(.infinity) == 0)
    }

    @Test func theStandingQueueLimitIsOnByDefault() {
        #expect(BrokerConfiguration().standingQueueWait == .milliseconds(20))
        #expect(BrokerConfiguration().standingQueueInterval == .milliseconds(100))
    }

    @Test func aBurstLateInAPaceWindowIsMeasuredFromWhenItArrivedNotFromTheWindowStart() throws {
        // The protocol's plain rule (80% of the deadline): the standing-queue limit, on by default, would shed `next`.
        var configuration = BrokerConfiguration()
        configuration.standingQueueWait = nil
        var broker = try CoreHarness(configuration)
        broker.register("w1", capacity: 4)
        // Two slow requests, one at a time: the worker is never full, so they say nothing about the pace.
        for index in 0..<2 {
            broker.send("slow\(index)", deadlineMs: 60_000)
            broker.advance(ms: 40)
            broker.answer("w1")
        }
        broker.advance(ms: 15)  // 95 ms into the first 100 ms pace window
        for index in 0..<40 { broker.send("b\(index)", deadlineMs: 3000) }
        #expect(broker.queued == 36)
        broker.answer("w1")
        broker.advance(ms: 5)  // the window closes 5 ms into the burst: too short a span to measure
        #expect(broker.core.intentTypes[0].pace.jobsPerSecond == 0)
        // Then 2 answers every 10 ms: about 200 jobs/s, which is what the next window must read.
        for _ in 0..<10 {
            broker.advance(ms: 10)
            broker.answer("w1")
            broker.answer("w1")
        }
        let pace = broker.core.intentTypes[0].pace.jobsPerSecond
        #expect(pace > 150 && pace < 250, "\(pace) jobs/s")
        // So a request behind the 15 still queued (at 200 jobs/s, 80 ms away) is not shed with a 250 ms deadline.
        broker.send("next", deadlineMs: 250)
        #expect(broker.endings(of: "next").isEmpty)
        #expect(broker.core.statistics.shedRequests == 0)
    }

    @Test func aBlockedWorkerGetsNoJobsUntilHeardFromAndItsJobGoesElsewhere() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2)
        broker.register("w2", capacity: 2)
        broker.blocked = ["w1"]
        broker.send("r1")  // tried on w1 (EAGAIN), then w2
        #expect(broker.jobIDs("w1").isEmpty)
        #expect(broker.jobIDs("w2") == ["r1"])
        broker.send("r2")
        #expect(broker.jobIDs("w2") == ["r1", "r2"])
        broker.send("r3")  // w2 full, w1 blocked: queued
        #expect(broker.queued == 1)
        broker.blocked = []
        broker.worker("w1", sends: .heartbeat)  // heard from: unblocked, takes the queued job
        #expect(broker.jobIDs("w1") == ["r3"])
        #expect(broker.core.statistics.jobsDispatched == 3)
    }

    @Test func aDuplicateRequestIDIsRefusedAndTheFirstGoesOn() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("same")
        broker.send("same")
        #expect(broker.endings(of: "same").map(\.code) == ["duplicate-request"])
        broker.answer("w1")
        #expect(broker.endings(of: "same").map(\.status) == [.error, .final])
        broker.send("same", client: "c2")  // another connection may use the same id
        #expect(broker.endings(of: "same", client: "c2").isEmpty)
    }
}
