import ConciergeJSON
import IntentKit
import Logging
import Testing
import ZeroMQ

@testable import IntentWorker

/// A real ``Worker`` running chained jobs (`Schemas/PROTOCOL.md` section 5.15) for a scripted broker (the ROUTER
/// of ``WorkerVersion2Tests``): one JOB whose last phase (F9) is later than its phase gives a RESULT per phase, each
/// under the same job id, and a CANCEL stops the chain before its next phase. Events are ordered by waiting for
/// observable state, never by sleeping.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WorkerVersion3Tests {
    typealias V2 = WorkerVersion2Tests

    /// A `CIPW03` JOB for the Wait intent, from `phase` through `last`.
    static func job(_ id: [UInt8], mode: String, phase: String = "resolve", last: String = "handle") -> [[UInt8]] {
        [
            Array("CIPW03".utf8), Array("JOB".utf8), id, Array("Wait".utf8), Array(phase.utf8), Array("30000".utf8),
            Array(#"{"intent":{"type":"Wait","parameters":{"mode":"\#(mode)"}}}"#.utf8), [], Array("1".utf8),
            Array(last.utf8),
        ]
    }

    @Test(arguments: WorkerConfiguration.JobExecution.allCases)
    func aChainedJobAnswersEachPhaseUnderItsJobIDEachOnThePreviousOutput(
        execution: WorkerConfiguration.JobExecution
    ) async throws {
        let setup = try await V2.start(execution)
        #expect(V2.text(setup.ready).first == "CIPW06")
        let id = V2.jobID(1)
        try setup.broker.send(Self.job(id, mode: "now"))
        let resolve = try V2.result(try await setup.broker.next(), answers: id)
        #expect(resolve.outcome == "continue")
        #expect(resolve.body["resolve"]?["mode"]?["kind"] == "success")
        let confirm = try V2.result(try await setup.broker.next(), answers: id)
        #expect(confirm.outcome == "continue")
        #expect(confirm.body["confirm"]?["code"] == "ready")
        #expect(confirm.body["resolve"] == resolve.body["resolve"])  // it ran on the resolve output
        let handle = try V2.result(try await setup.broker.next(), answers: id)
        #expect(handle.outcome == "stop")
        #expect(handle.body["handle"]?["code"] == "success")
        #expect(handle.body["confirm"] == confirm.body["confirm"])

        // Through confirm: two RESULTs, and the job ends with confirm's `continue`; handle is not run.
        try setup.broker.send(Self.job(V2.jobID(2), mode: "now", last: "confirm"))
        #expect(try V2.result(try await setup.broker.next(), answers: V2.jobID(2)).outcome == "continue")
        let last = try V2.result(try await setup.broker.next(), answers: V2.jobID(2))
        #expect(last.outcome == "continue" && last.body["confirm"] != nil && last.body["handle"] == nil)
        #expect(setup.probe.handlesStarted == 1)
        try await V2.stop(setup)
        let stopped = try #require(setup.log.metadata(of: "worker stopped").first)
        #expect(stopped["unfinished-jobs"] == "0")
    }

    @Test(arguments: WorkerConfiguration.JobExecution.allCases)
    func aCancelDuringAPhaseStopsTheChainBeforeTheNextPhase(execution: WorkerConfiguration.JobExecution) async throws {
        let setup = try await V2.start(execution)
        let id = V2.jobID(3)
        try setup.broker.send(Self.job(id, mode: "hold"))
        try await V2.waitUntil("resolve started") { setup.probe.resolvesStarted == 1 }
        try setup.broker.send([Array("CIPW03".utf8), Array("CANCEL".utf8), id])
        // Resolve ignored the cancellation and finished: its RESULT is sent, then confirm is answered `cancelled`
        // without running, and nothing more comes for the job.
        let resolve = try V2.result(try await setup.broker.next(), answers: id)
        #expect(resolve.outcome == "continue")
        let confirm = try V2.result(try await setup.broker.next(), answers: id)
        #expect(confirm.outcome == "cancelled")
        #expect(confirm.body["code"] == "cancelled")
        #expect(setup.probe.handlesStarted == 0)
        // The worker goes on: the next job is answered, and the stop finds nothing unfinished.
        try setup.broker.send(Self.job(V2.jobID(4), mode: "now", phase: "handle"))
        #expect(try V2.result(try await setup.broker.next(), answers: V2.jobID(4)).outcome == "stop")
        try await V2.stop(setup)
        let stopped = try #require(setup.log.metadata(of: "worker stopped").first)
        #expect(stopped["unfinished-jobs"] == "0")
        #expect(stopped["jobs-cancelled"] == "1")
    }

    @Test func aJobWithALastPhaseBeforeItsPhaseIsAnsweredMalformed() async throws {
        let setup = try await V2.start(.workerThread)
        try setup.broker.send(Self.job(V2.jobID(5), mode: "now", phase: "handle", last: "resolve"))
        let answer = try V2.result(try await setup.broker.next(), answers: V2.jobID(5))
        #expect(answer.outcome == "error")
        #expect(answer.body["code"] == "malformed")
        #expect(setup.probe.resolvesStarted == 0 && setup.probe.handlesStarted == 0)
        try await V2.stop(setup)
    }
}
