import IntentWire
import Testing

@testable import IntentBroker

/// The broker's rules for requests with idempotency keys (`Docs/IDEMPOTENCY.md`), through the core.
@Suite struct IdempotencyRuleTests {
    static let payment = #"{"intent":{"type":"Echo","parameters":{"text":"pay 5"}}}"#
    static let other = #"{"intent":{"type":"Echo","parameters":{"text":"pay 50"}}}"#

    func attempts(_ broker: borrowing CoreHarness, key: String) -> Int? {
        broker.core.idempotency.records[
            IdempotencyScope(identity: [], intentType: Array("Echo".utf8), key: Array(key.utf8))]?
            .attempts
    }

    @Test func aDuplicateInFlightAttachesAndGetsTheSameRepliesWithoutASecondJob() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4)
        broker.send("a", body: Self.payment, key: "k")
        broker.send("b", client: "c2", body: Self.payment, key: "k")
        #expect(broker.delivered.count == 1)
        broker.status("b", client: "c2")  // the duplicate is known by its own id
        #expect(broker.replies.last?.status == .progress)
        broker.answer("w1", body: #"{"paid":true}"#)
        let first = try #require(broker.endings(of: "a").first)
        let second = try #require(broker.endings(of: "b", client: "c2").first)
        #expect(first.status == .final && second.status == .final)
        #expect(first.body == #"{"paid":true}"# && second.body == first.body)
        #expect(!second.isReplay)
        #expect(broker.delivered.count == 1)
    }

    @Test func aCompletedKeyIsReplayedByteForByteAndAnotherBodyIsAConflict() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("a", body: Self.payment, key: "k")
        broker.answer("w1", body: #"{"paid":true,"id":"tx-1"}"#)
        broker.send("retry", body: Self.payment, key: "k")
        let replay = try #require(broker.endings(of: "retry").first)
        #expect(replay.isReplay)
        #expect(replay.status == .final && replay.body == #"{"paid":true,"id":"tx-1"}"#)
        broker.send("changed", body: Self.other, key: "k")
        #expect(broker.endings(of: "changed").first?.code == "idempotency-conflict")
        #expect(broker.delivered.count == 1)
        #expect(broker.core.statistics.replays == 1)
    }

    @Test func aRetryAfterTheWorkerWasLostRunsHandleAgainAsAttemptTwo() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("a", body: Self.payment, key: "k")
        broker.worker("w1", sends: .disconnect)
        #expect(broker.endings(of: "a").first?.code == "worker-lost")
        broker.register("w2")
        broker.send("a2", body: Self.payment, key: "k")
        #expect(broker.jobIDs("w2") == ["a2"])
        #expect(attempts(broker, key: "k") == 2)
        broker.answer("w2")
        broker.send("a3", body: Self.payment, key: "k")
        #expect(broker.endings(of: "a3").first?.isReplay == true)
    }

    @Test func aRetryWaitsWhileTheEarlierAttemptMayStillRunOnALiveWorker() throws {
        var broker = try CoreHarness(.init(defaultDeadline: .seconds(1), hardLimit: .seconds(2)))
        broker.register("w1", capacity: 2)
        broker.send("a", body: Self.payment, key: "k")
        for _ in 0..<25 {
            broker.advance(ms: 100)
            broker.worker("w1", sends: .heartbeat)
        }
        #expect(broker.endings(of: "a").first?.code == "timeout")
        broker.send("a2", body: Self.payment, key: "k")
        let refused = try #require(broker.endings(of: "a2").first)
        #expect(refused.code == "busy" && refused.body.contains("earlier attempt"))
        broker.answer("w1", request: "a")  // the first attempt's job ends after all: it no longer runs
        broker.send("a3", body: Self.payment, key: "k")
        #expect(broker.jobIDs("w1") == ["a3"])
        #expect(attempts(broker, key: "k") == 2)
    }

    @Test func aKeyedRequestThatNeverRanLeavesTheKeyUnused() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("holder", deadlineMs: 60_000)
        broker.send("a", deadlineMs: 100, body: Self.payment, key: "k")
        broker.advance(ms: 100)
        #expect(broker.endings(of: "a").first?.code == "busy")  // shed before any worker saw it
        broker.answer("w1")
        broker.send("a2", body: Self.other, key: "k")  // another body is no conflict: the key was never used
        #expect(broker.jobIDs("w1") == ["a2"])
        #expect(attempts(broker, key: "k") == 1)
    }

    @Test func resolveAndConfirmIgnoreKeys() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2)
        broker.send("r1", phase: .resolve, body: Self.payment, key: "k")
        broker.send("r2", phase: .resolve, body: Self.payment, key: "k")
        #expect(broker.delivered.count == 2)
    }

    @Test func anAttachedDuplicateGetsItsProgressAtItsOwnDeadline() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("a", deadlineMs: 100, body: Self.payment, key: "k")
        broker.advance(ms: 100)
        #expect(broker.replies(to: "a").map(\.status) == [.progress])
        broker.send("b", deadlineMs: 500, body: Self.payment, key: "k")
        #expect(broker.replies(to: "b").isEmpty)  // not before its own deadline
        broker.advance(ms: 449)
        #expect(broker.replies(to: "b").isEmpty)
        broker.advance(ms: 1)  // 500 ms less the 50 ms margin
        #expect(broker.replies(to: "b").map(\.status) == [.progress])
        broker.advance(ms: 200)
        #expect(broker.replies(to: "b").count == 1)  // one progress reply, never two
        broker.answer("w1")
        #expect(broker.replies(to: "b").map(\.status) == [.progress, .final])
    }

    @Test func aDuplicateWithAShorterDeadlineGetsItsProgressFirst() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("a", deadlineMs: 5000, body: Self.payment, key: "k")
        broker.send("b", deadlineMs: 200, body: Self.payment, key: "k")
        broker.advance(ms: 200)
        #expect(broker.replies(to: "b").map(\.status) == [.progress])
        #expect(broker.replies(to: "a").isEmpty)
        broker.answer("w1")
        #expect(broker.replies(to: "a").map(\.status) == [.final])
        #expect(broker.replies(to: "b").map(\.status) == [.progress, .final])
    }

    @Test func aDuplicateWhoseDeadlinePassesBeforeTheOperationStartsIsShed() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("holder", deadlineMs: 5000)
        broker.send("a", deadlineMs: 5000, body: Self.payment, key: "k")  // queued behind the holder
        broker.send("b", deadlineMs: 200, body: Self.payment, key: "k")
        broker.advance(ms: 200)
        #expect(broker.endings(of: "b").first?.code == "busy")
        broker.status("b")
        #expect(broker.replies.last?.code == "busy")  // kept for STATUS
        broker.answer("w1")
        broker.answer("w1", body: #"{"paid":true}"#)
        #expect(broker.endings(of: "a").first?.status == .final)
        #expect(broker.endings(of: "b").count == 1)
    }

    @Test func negativeIdempotencyBoundsAreRefusedAtStart() {
        for configuration in [
            BrokerConfiguration(idempotencyTTL: .seconds(-1)),
            BrokerConfiguration(maxIdempotencyRecords: -1),
            BrokerConfiguration(idempotencyMemory: -1),
        ] {
            #expect(throws: BrokerError.self) { try configuration.validate() }
        }
    }
}
