import ConciergeJSON
import IntentKit
import IntentWire
import IntentWorker
import Testing

/// Version 06 of the worker protocol (`Schemas/PROTOCOL.md` section 5.17): a JOB is `[CIPW06, JOB, header, body]`,
/// its fields packed into the header. A real ``Worker`` against a scripted broker: packed JOBs (with and without a
/// trace context, key and attempt) reach the handler, unusable headers are answered `malformed` (or ignored when
/// even the job id is missing) and the worker goes on, and a broker that refuses `CIPW06` gets a `CIPW05` READY.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WorkerVersion6Tests {
    typealias V2 = WorkerVersion2Tests
    static let body = Array(#"{"intent":{"type":"Wait","parameters":{"mode":"now"}}}"#.utf8)

    /// A packed handle JOB for the Wait intent.
    static func job(
        _ id: [UInt8], key: String? = nil, attempt: Int = 1, traceContext: TraceContext? = nil
    ) -> [[UInt8]] {
        let header = PackedJobHeader.encode(
            jobID: id, intentType: Array("Wait".utf8), phase: .handle, lastPhase: .handle, timeLeftMilliseconds: 30_000,
            attempt: attempt, idempotencyKey: key.map { Array($0.utf8) }, traceContext: traceContext)
        return [Array("CIPW06".utf8), Array("JOB".utf8), header, body]
    }

    static func errorCode(_ result: (outcome: String, body: JSONValue)) -> String? {
        result.outcome == "error" ? result.body["code"]?.stringValue : nil
    }

    @Test func packedJobsReachTheHandlerWithTheirKeyAttemptAndTraceContext() async throws {
        let setup = try await V2.start(.workerThread)
        #expect(V2.text(setup.ready).first == "CIPW06")
        let trace = try TraceContext(traceparent: WorkerVersion5Tests.traceparent, tracestate: "vendor=opaque")
        try setup.broker.send(Self.job(V2.jobID(1), key: "k-6", attempt: 2, traceContext: trace))
        let traced = try V2.result(try await setup.broker.next(), answers: V2.jobID(1))
        #expect(traced.outcome == "stop")
        #expect(traced.body["handle"]?["data"]?["traceparent"] == .string(WorkerVersion5Tests.traceparent))
        #expect(traced.body["handle"]?["data"]?["tracestate"] == "vendor=opaque")
        #expect(traced.body["handle"]?["data"]?["idempotencyKey"] == "k-6")
        #expect(traced.body["handle"]?["data"]?["attempt"] == 2)
        try setup.broker.send(Self.job(V2.jobID(2)))
        let plain = try V2.result(try await setup.broker.next(), answers: V2.jobID(2))
        #expect(plain.outcome == "stop" && plain.body["handle"]?["data"] == ["attempt": 1])
        // A CIPW05 JOB still runs for a CIPW06 worker (W1: any version it speaks).
        try setup.broker.send(WorkerVersion5Tests.job(V2.jobID(3), version: "CIPW05"))
        let older = try V2.result(try await setup.broker.next(), answers: V2.jobID(3))
        #expect(older.outcome == "stop")
        try await V2.stop(setup)
    }

    @Test func unusablePackedJobsAreAnsweredMalformedAndTheWorkerGoesOn() async throws {
        let setup = try await V2.start(.workerThread)
        let good = Self.job(V2.jobID(1))[2]
        var badPhase = good
        badPhase[8] = 3
        var lastBeforePhase = good
        lastBeforePhase[9] = 0
        var noAttempt = good
        noAttempt.replaceSubrange(18..<22, with: [0, 0, 0, 0])
        var typeTooLong = good
        typeTooLong[22] = 200
        var badUTF8 = good
        badUTF8[23] = 0xFF
        let cases: [(String, [[UInt8]])] = [
            ("phase byte 3", [Self.job([])[0], Self.job([])[1], badPhase, Self.body]),
            ("last phase before the phase", [Self.job([])[0], Self.job([])[1], lastBeforePhase, Self.body]),
            ("attempt 0", [Self.job([])[0], Self.job([])[1], noAttempt, Self.body]),
            ("type past the end", [Self.job([])[0], Self.job([])[1], typeTooLong, Self.body]),
            ("type not UTF-8", [Self.job([])[0], Self.job([])[1], badUTF8, Self.body]),
            ("a byte left over", [Self.job([])[0], Self.job([])[1], good + [7], Self.body]),
            ("cut short", [Self.job([])[0], Self.job([])[1], Array(good.prefix(20)), Self.body]),
            ("empty body", [Self.job([])[0], Self.job([])[1], good, []]),
            ("5 frames", Self.job(V2.jobID(1)) + [[1]]),
        ]
        for (index, (what, frames)) in cases.enumerated() {
            // Each case under its own job id, written over the header's first 8 bytes.
            let id = V2.jobID(UInt8(10 + index))
            var message = frames
            message[2].replaceSubrange(0..<8, with: id)
            try setup.broker.send(message)
            let answer = try V2.result(try await setup.broker.next(), answers: id)
            #expect(Self.errorCode(answer) == "malformed", "\(what): \(answer)")
        }
        // Shorter than a job id: ignored (nothing to answer); the next good JOB is answered as usual.
        try setup.broker.send([Self.job([])[0], Self.job([])[1], [1, 2, 3], Self.body])
        try setup.broker.send(Self.job(V2.jobID(2)))
        let next = try V2.result(try await setup.broker.next(), answers: V2.jobID(2))
        #expect(next.outcome == "stop")
        try await V2.stop(setup)
    }

    @Test func aBrokerThatRefusesVersion6GetsAVersion5Ready() async throws {
        let setup = try await V2.start(.workerThread)
        #expect(V2.text(setup.ready).first == "CIPW06")
        // What a broker of versions 01 to 05 answers (check 2; ERROR in CIPW01, section 5.9).
        try setup.broker.send(["CIPW01", "ERROR", "unsupported-version", "this broker speaks CIPW01 to CIPW05"])
        let again = try await setup.broker.next()
        #expect(Array(V2.text(again).prefix(5)) == ["CIPW05", "READY", "4", "w2", "Wait"])
        try setup.broker.send(WorkerVersion5Tests.job(V2.jobID(1), version: "CIPW05"))
        let answer = try V2.result(try await setup.broker.next(), answers: V2.jobID(1), version: "CIPW05")
        #expect(answer.outcome == "stop")
        #expect(setup.log.metadata(of: "the broker does not speak CIPW06; registering again with CIPW05").count == 1)
        try await V2.stop(setup, version: "CIPW05")
    }
}
