import ConciergeJSON
import IntentKit
import IntentWorker
import Testing

/// Version 05 of the worker protocol (`Schemas/PROTOCOL.md` section 5.7): a JOB carries the W3C trace context of
/// its request in F10/F11, and the handler sees it in `HandlerContext.traceContext` (worker tracing off: the JOB's
/// own context, unchanged).
@Suite struct WorkerVersion5Tests {
    typealias V2 = WorkerVersion2Tests
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// A handle JOB for the Wait intent in `version`, with `traceparent` and `tracestate` as F10/F11 in version 05.
    static func job(_ id: [UInt8], version: String, traceparent: String = "", tracestate: String = "") -> [[UInt8]] {
        var frames = [
            Array(version.utf8), Array("JOB".utf8), id, Array("Wait".utf8), Array("handle".utf8),
            Array("30000".utf8), Array(#"{"intent":{"type":"Wait","parameters":{"mode":"now"}}}"#.utf8), [],
            Array("1".utf8), Array("handle".utf8),
        ]
        if version == "CIPW05" { frames += [Array(traceparent.utf8), Array(tracestate.utf8)] }
        return frames
    }

    @Test func theJobsTraceContextReachesTheHandlerUnchanged() async throws {
        let setup = try await V2.start(.workerThread)
        #expect(V2.text(setup.ready).first == "CIPW06")
        try setup.broker.send(
            Self.job(V2.jobID(1), version: "CIPW05", traceparent: Self.traceparent, tracestate: "vendor=opaque"))
        let traced = try V2.result(try await setup.broker.next(), answers: V2.jobID(1))
        #expect(traced.body["handle"]?["data"]?["traceparent"] == .string(Self.traceparent))
        #expect(traced.body["handle"]?["data"]?["tracestate"] == "vendor=opaque")
        // Empty frames, or a JOB of an older version: no trace context.
        try setup.broker.send(Self.job(V2.jobID(2), version: "CIPW05"))
        let untraced = try V2.result(try await setup.broker.next(), answers: V2.jobID(2))
        #expect(untraced.outcome == "stop" && untraced.body["handle"]?["data"]?["traceparent"] == nil)
        try setup.broker.send(Self.job(V2.jobID(3), version: "CIPW04"))
        let older = try V2.result(try await setup.broker.next(), answers: V2.jobID(3))
        #expect(older.outcome == "stop" && older.body["handle"]?["data"]?["traceparent"] == nil)
        try await V2.stop(setup)
    }
}
