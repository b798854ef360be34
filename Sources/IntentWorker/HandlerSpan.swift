import IntentKit
import IntentWire
import Tracing

/// The worker's span (Docs/TRACING.md): `concierge.handler` for each phase a handler runs (kind server), a child
/// of the JOB's trace context (F10/F11), made with the tracer bootstrapped in `InstrumentationSystem` when the
/// worker traces (``WorkerConfiguration/tracing``). While the handler runs, the span is the task's
/// `ServiceContext.current`, and ``HandlerContext/traceContext`` is the span's W3C context.
enum HandlerSpan {
    /// Runs one phase of a job inside its span.
    static func run(
        _ provider: HandlerProvider, intentType: String, phase: IntentPhase, body: [UInt8], context: HandlerContext
    ) async -> JobOutput {
        let tracer = InstrumentationSystem.tracer
        var parent = ServiceContext.topLevel
        if let trace = context.traceContext {
            var headers = ["traceparent": trace.traceparent]
            if !trace.tracestate.isEmpty { headers["tracestate"] = trace.tracestate }
            tracer.extract(headers, into: &parent, using: HeaderExtractor())
        }
        return await tracer.withSpan("concierge.handler", context: parent, ofKind: .server) { span in
            span.attributes["concierge.intent_type"] = SpanAttribute.string(intentType)
            span.attributes["concierge.phase"] = SpanAttribute.string(phase.name.description)
            span.attributes["concierge.job_id"] = SpanAttribute.string(context.jobID)
            span.attributes["concierge.worker"] = SpanAttribute.string(context.workerName)
            span.attributes["concierge.attempt"] = SpanAttribute.int64(Int64(context.attempt))
            var context = context
            var headers: [String: String] = [:]
            tracer.inject(span.context, into: &headers, using: HeaderInjector())
            if let traceparent = headers["traceparent"],
                let own = try? TraceContext(
                    traceparent: traceparent, tracestate: context.traceContext?.tracestate ?? "")
            {
                context.traceContext = own
            }
            let output = await provider.run(intentType: intentType, phase: phase, body: body, context: context)
            span.attributes["concierge.outcome"] = SpanAttribute.string(output.outcome.name.description)
            if output.outcome == .error { span.setStatus(SpanStatus(code: .error)) }
            return output
        }
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
