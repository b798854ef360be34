import IntentWire
import Tracing

/// The broker's spans (Docs/TRACING.md), with ``BrokerConfiguration/tracing``: `concierge.request` for each
/// request (kind server, a child of the caller's trace context) and `concierge.job` for each JOB sent (kind client,
/// a child of the request's span; one sent again after a lost worker links to the earlier job's span). Made with
/// the tracer bootstrapped in `InstrumentationSystem` (Swift OTel, by `concierge broker --tracing`).
///
/// The core tells of the moments (``TraceEvent``); the shell tells of JOBs sent and RESULTs received. Loop thread
/// only. Without tracing there is no instance, and the hot path pays one nil check per JOB and RESULT.
final class BrokerSpans {
    /// The spans of a request in flight.
    private struct RequestSpans {
        let span: any Span
        let tracestate: String
        /// The job span now open: its job id, the phase its worker runs now and the last it runs (section 5.15).
        var job: (id: UInt64, span: any Span, phase: RequestPhase, lastPhase: RequestPhase)?
        /// How many JOBs were sent for each phase (`concierge.attempt` of the next).
        var sent: [RequestPhase: Int] = [:]
    }

    private var requests: [RequestID: RequestSpans] = [:]
    private var jobs: [UInt64: RequestID] = [:]

    init() {}

    /// A moment the core told of.
    func handle(_ event: TraceEvent) {
        let tracer = InstrumentationSystem.tracer
        switch event {
        case .started(let id, let requestID, let intentType, let phase, let parent):
            let span = tracer.startSpan("concierge.request", context: Self.context(parent), ofKind: .server)
            span.attributes["concierge.request_id"] = SpanAttribute.string(String(decoding: requestID, as: UTF8.self))
            span.attributes["concierge.intent_type"] = SpanAttribute.string(String(decoding: intentType, as: UTF8.self))
            span.attributes["concierge.phase"] = SpanAttribute.string(phase.name.description)
            requests[id] = RequestSpans(span: span, tracestate: parent?.tracestate ?? "")
        case .replayed(let request):
            let span = tracer.startSpan(
                "concierge.request", context: Self.context(request.traceContext), ofKind: .server)
            span.attributes["concierge.request_id"] = SpanAttribute.string(
                String(decoding: request.requestID, as: UTF8.self))
            span.attributes["concierge.intent_type"] = SpanAttribute.string(request.intentTypeName)
            span.attributes["concierge.phase"] = SpanAttribute.string(request.phase.name.description)
            span.attributes["concierge.outcome"] = SpanAttribute.string("replay")
            span.addEvent("replay")
            span.end()
        case .event(let id, let mark):
            requests[id]?.span.addEvent(SpanEvent(name: mark.rawValue))
        case .ended(let id, let outcome, let lateFinal):
            guard let spans = requests.removeValue(forKey: id) else { return }
            if let job = spans.job {
                jobs.removeValue(forKey: job.id)
                job.span.attributes["concierge.outcome"] = SpanAttribute.string("unanswered")
                job.span.end()
            }
            if lateFinal, outcome == "final" { spans.span.addEvent("late-final") }
            spans.span.attributes["concierge.outcome"] = SpanAttribute.string(outcome)
            if outcome != "final" { spans.span.setStatus(SpanStatus(code: .error, message: outcome)) }
            spans.span.end()
        }
    }

    /// A JOB goes out: its span starts. Returns the trace context the JOB carries (F10, F11): the job span's,
    /// with the request's tracestate (the request's own when the tracer makes no context, e.g. a no-op tracer).
    func jobSent(_ job: JobDispatch<some Any>, workerName: String) -> TraceContext? {
        guard var spans = requests[job.request] else { return job.traceContext }
        let tracer = InstrumentationSystem.tracer
        let span = tracer.startSpan("concierge.job", context: spans.span.context, ofKind: .client)
        let attempt = (spans.sent[job.phase] ?? 0) + 1
        spans.sent[job.phase] = attempt
        if let earlier = spans.job {
            // Its earlier job was never answered (its worker was lost): that span ends, and this one links to it.
            jobs.removeValue(forKey: earlier.id)
            earlier.span.attributes["concierge.outcome"] = SpanAttribute.string("worker-lost")
            earlier.span.setStatus(SpanStatus(code: .error, message: "worker lost"))
            earlier.span.end()
            span.addLink(SpanLink(context: earlier.span.context, attributes: [:]))
        }
        span.attributes["concierge.job_id"] = SpanAttribute.string(String(job.jobID, radix: 16))
        span.attributes["concierge.phase"] = SpanAttribute.string(job.phase.name.description)
        span.attributes["concierge.worker"] = SpanAttribute.string(workerName)
        span.attributes["concierge.attempt"] = SpanAttribute.int64(Int64(attempt))
        if job.lastPhase != job.phase {
            span.attributes["concierge.last_phase"] = SpanAttribute.string(job.lastPhase.name.description)
        }
        spans.job = (job.jobID, span, job.phase, job.lastPhase)
        requests[job.request] = spans
        jobs[job.jobID] = job.request
        guard job.version >= 5 else { return nil }
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: HeaderInjector())
        guard let traceparent = headers["traceparent"],
            let context = try? TraceContext(traceparent: traceparent, tracestate: spans.tracestate)
        else { return job.traceContext }
        return context
    }

    /// A RESULT for job `jobID` came: the job's span ends, unless the worker goes on with the next phase of a
    /// chained job (section 5.15).
    func jobAnswered(_ jobID: UInt64, outcome: JobOutcome) {
        guard let id = jobs[jobID], var spans = requests[id], let job = spans.job, job.id == jobID else { return }
        if outcome == .continue, job.phase.order < job.lastPhase.order, let next = job.phase.next {
            job.span.addEvent(
                SpanEvent(name: "phase", attributes: ["concierge.phase": .string(job.phase.name.description)]))
            spans.job = (job.id, job.span, next, job.lastPhase)
            requests[id] = spans
            return
        }
        jobs.removeValue(forKey: jobID)
        job.span.attributes["concierge.outcome"] = SpanAttribute.string(outcome.name.description)
        if outcome == .error { job.span.setStatus(SpanStatus(code: .error)) }
        job.span.end()
        spans.job = nil
        requests[id] = spans
    }

    /// A service context whose span context is `parent`'s, as the bootstrapped tracer extracts it (top level for none).
    static func context(_ parent: TraceContext?) -> ServiceContext {
        var context = ServiceContext.topLevel
        guard let parent else { return context }
        var headers = ["traceparent": parent.traceparent]
        if !parent.tracestate.isEmpty { headers["tracestate"] = parent.tracestate }
        InstrumentationSystem.tracer.extract(headers, into: &context, using: HeaderExtractor())
        return context
    }
}

/// Reads headers from a dictionary of lowercased names for an instrument's `extract`.
struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key.lowercased()] }
}

/// Writes what an instrument injects into a dictionary of lowercased header names.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key.lowercased()] = value
    }
}
