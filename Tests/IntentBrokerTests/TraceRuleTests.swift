import IntentWire
import Testing

@testable import IntentBroker

/// Sections 4.2 and 5.7 (`CIPC04`, `CIPW05`): the broker carries a request's trace context to its jobs. Without
/// broker tracing (the default) a `CIPW05` worker gets the request's own context unchanged in each JOB; a worker
/// registered in an older version gets none; nothing is told to the shell for spans.
@Suite struct TraceRuleTests {
    // swift-format-ignore: NeverUseForceTry
    static let trace = try! TraceContext(
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=opaque")

    @Test func everyJobOfATracedRequestCarriesItsTraceContextUnchanged() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4, version: 5)
        broker.send("plain", phase: .handle)
        broker.send("traced", phase: .handle, traceContext: Self.trace)
        broker.send("keyed", phase: .handle, key: "k", traceContext: Self.trace)
        let jobs = try #require(broker.jobs["w1"])
        #expect(jobs.map { broker.requestID(of: $0) } == ["plain", "traced", "keyed"])
        #expect(jobs.map(\.traceContext) == [nil, Self.trace, Self.trace])
        // Each phase of a lifecycle: the chained resolve-confirm job, then the handle job.
        func lifeJob() -> JobDispatch<[UInt8]>? { broker.jobs["w1"]?.first { broker.requestID(of: $0) == "life" } }
        broker.send("life", phase: .lifecycle, traceContext: Self.trace)
        let chained = try #require(lifeJob())
        #expect(chained.phase == .resolve && chained.lastPhase == .confirm && chained.traceContext == Self.trace)
        broker.answer("w1", request: "life", outcome: .continue, body: #"{"resolve":{}}"#)
        broker.answer("w1", request: "life", outcome: .continue, body: #"{"resolve":{},"confirm":{}}"#)
        let handle = try #require(lifeJob())
        #expect(handle.phase == .handle && handle.traceContext == Self.trace)
        #expect(broker.traces.isEmpty, "without broker tracing the core tells the shell nothing for spans")
    }

    @Test func aWorkerOfAnOlderVersionGetsNoTraceContext() throws {
        var broker = try CoreHarness()
        broker.register("w4", capacity: 4, version: 4)
        broker.send("traced", phase: .handle, traceContext: Self.trace)
        let job = try #require(broker.jobs["w4"]?.first)
        #expect(job.version == 4 && job.traceContext == nil)
    }

    @Test func aJobSentAgainAfterALostWorkerCarriesTheSameTraceContext() throws {
        var broker = try CoreHarness()
        broker.register("w1", version: 5)
        broker.register("w2", version: 5)
        broker.send("r", phase: .resolve, traceContext: Self.trace)
        let first = broker.delivered[0].worker
        broker.worker(first, sends: .disconnect)
        let other = first == "w1" ? "w2" : "w1"
        let again = try #require(broker.jobs[other]?.first)
        #expect(broker.requestID(of: again) == "r" && again.traceContext == Self.trace)
    }

    @Test func aTracedTurnCarriesItsTraceContextToItsJobs() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 2, types: ["SendMessage"], version: 5)
        broker.turn(
            "t1", conversation: "c-1", number: 1, body: #"{"intent":{"type":"SendMessage"}}"#,
            traceContext: Self.trace)
        let job = try #require(broker.jobs["w1"]?.first)
        #expect(job.traceContext == Self.trace)
    }

    @Test func withBrokerTracingTheCoreTellsTheShellOfEachMoment() throws {
        var configuration = BrokerConfiguration()
        configuration.tracing = true
        var broker = try CoreHarness(configuration)
        broker.register("w1", version: 5)
        broker.send("r", phase: .handle, deadlineMs: 100, traceContext: Self.trace)
        broker.send("q", phase: .handle)  // queued; no trace context: the broker's span starts a trace
        broker.cancel("q")
        broker.advance(ms: 100)  // r's progress reply at the deadline
        broker.answer("w1")
        let described = broker.traces.map { event -> String in
            switch event {
            case .started(_, let id, _, let phase, let parent):
                "started \(String(decoding: id, as: UTF8.self)) \(phase) \(parent == Self.trace)"
            case .replayed(let request): "replayed \(request.intentTypeName)"
            case .event(_, let mark): mark.rawValue
            case .ended(_, let outcome, let lateFinal): "ended \(outcome) \(lateFinal)"
            }
        }
        #expect(
            described == [
                "started r handle true", "started q handle false", "cancel", "ended cancelled false", "progress",
                "ended final true",
            ])
    }
}
