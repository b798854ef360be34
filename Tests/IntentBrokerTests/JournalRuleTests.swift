import IntentWire
import Testing

@testable import IntentBroker

/// The broker core with a journal (`Docs/JOURNAL.md`): everything it sends is recorded first (the harness
/// checks each batch against ``JournalModel``), and a broker restarted from the journal finishes what the old one
/// accepted.
@Suite struct JournalRuleTests {
    static let payment = #"{"intent":{"type":"Echo","parameters":{"text":"pay 5"}}}"#

    @Test func queuedAndRunningRequestsRunAgainAfterARestartAndStoredEndingsAnswerStatus() throws {
        var broker = try CoreHarness(.init(hardLimit: .seconds(60)), journaling: true)
        broker.register("w1")
        broker.send("done", phase: .resolve)
        broker.answer("w1", outcome: .continue, body: #"{"resolved":1}"#)
        broker.send("running", phase: .lifecycle, deadlineMs: 30_000)
        broker.send("queued", phase: .confirm, deadlineMs: 30_000)
        #expect(broker.queued == 1)
        try broker.restart()
        #expect(broker.core.statistics.requestsRecovered == 2)
        broker.status("done")
        #expect(broker.replies.last?.status == .final && broker.replies.last?.body == #"{"resolved":1}"#)
        broker.register("w2", capacity: 2)
        // Both run again from their first job, in acceptance order.
        #expect(broker.jobIDs("w2") == ["running", "queued"])
        #expect(broker.jobs["w2"]?.first?.phase == .resolve)
        broker.answer("w2", request: "queued", body: #"{"confirmed":1}"#)
        broker.answer("w2", request: "running", outcome: .stop, body: #"{"needs":"value"}"#)
        #expect(broker.endings(of: "running").map(\.body) == [#"{"needs":"value"}"#])
        #expect(broker.endings(of: "queued").map(\.body) == [#"{"confirmed":1}"#])
    }

    @Test func aHandleJobThatWentOutEndsOutcomeUnknownAndItsKeyRunsAgainAsTheNextAttempt() throws {
        var broker = try CoreHarness(journaling: true)
        broker.register("w1", version: 2)
        broker.send("pay", body: Self.payment, key: "k")
        #expect(broker.delivered.map(\.request) == ["pay"])
        try broker.restart()
        #expect(broker.endings(of: "pay").first?.code == "outcome-unknown")
        broker.register("w2", version: 2)
        broker.send("retry", body: Self.payment, key: "k")
        let job = try #require(broker.jobs["w2"]?.first)
        #expect(broker.requestID(of: job) == "retry" && job.attempt == 2)
        broker.answer("w2", body: #"{"paid":true}"#)
        try broker.restart()
        broker.send("again", body: Self.payment, key: "k")
        let replay = try #require(broker.endings(of: "again").first)
        #expect(replay.isReplay && replay.body == #"{"paid":true}"#)
    }

    @Test func aDuplicateShedAtItsOwnDeadlineIsNotAttachedAgainAfterARestart() throws {
        var broker = try CoreHarness(.init(hardLimit: .seconds(60)), journaling: true)
        broker.register("w1")
        broker.send("holder", deadlineMs: 30_000)
        broker.send("a", deadlineMs: 30_000, body: Self.payment, key: "k")  // queued behind the holder
        broker.send("b", deadlineMs: 200, body: Self.payment, key: "k")  // attached to a
        broker.advance(ms: 200)
        #expect(broker.endings(of: "b").first?.code == "busy")
        try broker.restart()
        broker.register("w2", capacity: 2)
        broker.answer("w2", request: "a", body: #"{"paid":true}"#)
        #expect(broker.endings(of: "a").count == 1)
        #expect(broker.endings(of: "b").count == 1, "\(broker.replies(to: "b"))")
    }

    @Test func aRequestWhoseDeadlinePassedDuringTheRestartGetsNoSecondProgress() throws {
        var broker = try CoreHarness(.init(defaultDeadline: .seconds(1), hardLimit: .seconds(60)), journaling: true)
        broker.register("w1")
        broker.send("slow", phase: .resolve)
        broker.advance(ms: 1000)
        #expect(broker.replies(to: "slow").map(\.status) == [.progress])
        try broker.restart()
        broker.register("w2")
        broker.advance(ms: 10)
        broker.answer("w2", outcome: .continue)
        #expect(broker.replies(to: "slow").map(\.status) == [.progress, .final])
    }

    @Test func everythingSentIsJournaledFirstAndEveryRequestEndsOnceAcrossRestarts() async throws {
        for seed in 0..<200 {
            var generator = SplitMix(seed: UInt64(seed))
            let steps = (0..<120).map { _ in Int(generator.next() % 10_000) }
            try RandomizedRuleTests.run(steps, journaling: true, label: "seed \(seed)")
            // CPU-bound: let the suites that run a broker in process have the cooperative pool now and then.
            await Task.yield()
        }
    }
}

/// A small deterministic generator for seeded sequences.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
