import IntentWire
import Testing

@testable import IntentBroker

/// Section 6.3 (deadlines, progress, hard limit), 6.6 (grace period for unserved types) and 8.2 (shutdown).
@Suite struct TimeRuleTests {
    @Test func aRequestThatEndsBeforeItsDeadlineGetsNoProgress() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("r", deadlineMs: 1000)
        broker.advance(ms: 900)
        broker.answer("w1")
        broker.advance(ms: 200)
        #expect(broker.replies(to: "r").map(\.status) == [.final])
    }

    @Test func aStartedRequestGetsOneProgressAMarginBeforeItsDeadlineThenItsFinal() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("r", deadlineMs: 1000)
        broker.advance(ms: 949)
        #expect(broker.replies(to: "r").isEmpty)
        broker.advance(ms: 1)  // 950 ms: the deadline less the 50 ms margin
        #expect(broker.replies(to: "r").map(\.status) == [.progress])
        let progress = try #require(broker.replies(to: "r").first)
        #expect(progress.body.contains(#""state":"running""#) && progress.body.contains(#""worker":"w1""#))
        broker.advance(ms: 500)
        broker.answer("w1")
        #expect(broker.replies(to: "r").map(\.status) == [.progress, .final])
    }

    @Test func aRequestThatNeverStartedIsShedWithBusyAtItsDeadline() throws {
        var broker = try CoreHarness()
        broker.register("w1")
        broker.send("running", deadlineMs: 60_000)
        broker.send("waiting", deadlineMs: 100)
        broker.advance(ms: 90)  // a tenth of 100 ms early
        #expect(broker.endings(of: "waiting").map(\.code) == ["busy"])
        #expect(broker.replies(to: "waiting").count == 1)
        #expect(broker.queued == 0)
        broker.answer("w1")
        #expect(broker.jobIDs("w1").isEmpty)  // the shed request is not run
    }

    @Test func theHardLimitEndsARequestWithTimeoutWithinTheLimit() throws {
        var broker = try CoreHarness(.init(defaultDeadline: .milliseconds(500), hardLimit: .milliseconds(1000)))
        broker.register("w1")
        broker.send("r")
        broker.advance(ms: 450)
        #expect(broker.replies(to: "r").map(\.status) == [.progress])
        broker.advance(ms: 499)
        #expect(broker.endings(of: "r").isEmpty)
        broker.advance(ms: 1)  // 950 ms: the hard limit less its margin, so the error arrives within the limit
        #expect(broker.endings(of: "r").map(\.code) == ["timeout"])
        // The worker still holds the job: its slot stays taken until it answers, then the result is dropped.
        broker.send("next")
        #expect(broker.queued == 1)
        broker.answer("w1")
        #expect(broker.replies(to: "r").count == 2)
        #expect(broker.jobIDs("w1") == ["next"])
    }

    @Test func whenTheDeadlineIsTheHardLimitTheTimeoutFollowsTheProgressImmediately() throws {
        var broker = try CoreHarness(.init(defaultDeadline: .milliseconds(1000), hardLimit: .milliseconds(1000)))
        broker.register("w1")
        broker.send("r")
        broker.advance(ms: 950)
        #expect(broker.replies(to: "r").map(\.status) == [.progress, .error])
        #expect(broker.endings(of: "r").first?.code == "timeout")
    }

    @Test func aLifecycleRunsItsPhasesInTurnAndStopsAtTheFirstThatSaysStop() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 1)
        broker.send("l", phase: .lifecycle, body: "{\"intent\":1}")
        #expect(broker.delivered.map(\.phase) == [.resolve])
        broker.answer("w1", outcome: .continue, body: "{\"resolved\":1}")
        #expect(broker.delivered.map(\.phase) == [.resolve, .confirm])
        #expect(broker.jobs["w1"]?.first?.body == Array("{\"resolved\":1}".utf8))
        broker.answer("w1", outcome: .stop, body: "{\"confirm\":\"failure\"}")
        let ending = try #require(broker.endings(of: "l").first)
        #expect(ending.status == .final && ending.phase == "confirm")
        // `continue` on a single phase ends it too.
        broker.send("h", phase: .handle)
        broker.answer("w1", outcome: .continue)
        #expect(broker.endings(of: "h").map(\.status) == [.final])
    }

    @Test func statusAnswersProgressThenTheKeptResultThenUnknownOnceExpired() throws {
        var broker = try CoreHarness(.init(resultTTL: .seconds(2)))
        broker.register("w1")
        broker.send("r")
        broker.status("r")
        #expect(broker.replies.last.map { $0.command == .status && $0.status == .progress } == true)
        broker.answer("w1", body: "{\"x\":1}")
        broker.status("r")
        #expect(broker.replies.last.map { $0.status == .final && $0.body == "{\"x\":1}" } == true)
        broker.advance(ms: 3000)
        broker.status("r")
        #expect(broker.replies.last?.code == "unknown-request")
        broker.status("r", client: "someone-else")
        #expect(broker.replies.last?.code == "unknown-request")
    }

    @Test func requestsForATypeWhoseLastWorkerLeftWaitForTheGracePeriod() throws {
        var broker = try CoreHarness(.init(workerGracePeriod: .milliseconds(2000)))
        broker.register("w1")
        broker.worker("w1", sends: .disconnect)
        broker.send("waits", deadlineMs: 60_000)
        #expect(broker.queued == 1)
        broker.advance(ms: 1000)  // a heartbeat within the grace period changes nothing
        broker.register("w2")
        #expect(broker.jobIDs("w2") == ["waits"])
        broker.worker("w2", sends: .disconnect)
        #expect(broker.endings(of: "waits").map(\.code) == ["worker-lost"])
        broker.send("orphan", deadlineMs: 60_000)
        broker.advance(ms: 2000)
        #expect(broker.endings(of: "orphan").map(\.code) == ["unknown-intent"])
        broker.send("late")
        #expect(broker.endings(of: "late").map(\.code) == ["unknown-intent"])
        #expect(broker.queued == 0)
    }

    @Test func anUnknownIntentErrorQuotesAtMost64BytesOfTheType() throws {
        var broker = try CoreHarness(.init(startupGracePeriod: .zero))
        let type = String(repeating: "x", count: 255)
        broker.send("r", type: type)
        let ending = try #require(broker.endings(of: "r").first)
        #expect(ending.code == "unknown-intent")
        #expect(ending.body.contains(String(repeating: "x", count: 64) + "..."))
        #expect(!ending.body.contains(String(repeating: "x", count: 65)))
    }

    @Test func shutdownRefusesNewRequestsLetsAcceptedOnesFinishThenEndsTheRest() throws {
        var broker = try CoreHarness(.init(shutdownGracePeriod: .seconds(1)))
        broker.register("w1", capacity: 1)
        broker.send("a", deadlineMs: 60_000)
        broker.send("b", deadlineMs: 60_000)
        broker.send("c", deadlineMs: 60_000)
        broker.shutdown(finish: false)
        broker.send("new")
        #expect(broker.endings(of: "new").map(\.code) == ["shutting-down"])
        broker.answer("w1")  // a ends, b starts: dispatching goes on
        #expect(broker.jobIDs("w1") == ["b"])
        let doneEarly = broker.core.isDone(now: broker.now)
        #expect(!doneEarly)
        broker.now += 1_000_000_000
        let done = broker.core.isDone(now: broker.now)
        #expect(done)
        broker.shutdown(finish: true)
        #expect(broker.endings(of: "a").map(\.status) == [.final])
        #expect(broker.endings(of: "b").map(\.code) == ["shutting-down"])
        #expect(broker.endings(of: "c").map(\.code) == ["shutting-down"])
        #expect(broker.controls.last.map { $0.worker == "w1" && $0.control == .disconnect } == true)
        #expect(broker.core.requests.isEmpty && broker.queued == 0)
    }

    @Test func aConfigurationOutsideTheProtocolsBoundsIsRefused() {
        for configuration in [
            BrokerConfiguration(defaultDeadline: .milliseconds(5)),
            BrokerConfiguration(defaultDeadline: .milliseconds(70_000), hardLimit: .milliseconds(80_000)),
            BrokerConfiguration(defaultDeadline: .seconds(3), hardLimit: .seconds(2)),
            BrokerConfiguration(heartbeatInterval: .zero),
        ] {
            #expect(throws: BrokerError.self) { try configuration.validate() }
        }
        #expect(throws: Never.self) { try BrokerConfiguration().validate() }
    }
}
