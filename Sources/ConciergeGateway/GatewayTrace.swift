import ConciergeJSON
import HTTPTypes
import Hummingbird
import IntentClient
import IntentWire
import Tracing

extension TraceContext {
    /// The W3C trace context of an HTTP request's `traceparent` and `tracestate` headers. An invalid
    /// `traceparent` is ignored (nil: W3C Trace Context Level 1 says a receiver then starts a new trace, so it is
    /// not an error); an invalid `tracestate` alone is dropped, keeping the trace id and parent.
    static func incoming(_ headers: HTTPFields) -> TraceContext? {
        incoming(traceparent: headers[GatewayHeaders.traceparent], tracestate: headers[GatewayHeaders.tracestate])
    }

    static func incoming(traceparent: String?, tracestate: String?) -> TraceContext? {
        guard let traceparent else { return nil }
        return (try? TraceContext(traceparent: traceparent, tracestate: tracestate ?? ""))
            ?? (try? TraceContext(traceparent: traceparent))
    }
}

/// Where a request's trace goes: the one place that knows how the gateway hands a trace context to the client.
enum GatewayTrace {
    /// The trace context a request carries to the broker, and the gateway's span for it. Without gateway tracing,
    /// `trace` (the caller's headers) goes to the broker unchanged; with it, a server span `POST /v1/requests` whose
    /// parent is `trace` is open until the request ends (``end(_:outcome:)``), and the broker gets the span's
    /// context. Without a context (no header, no tracing) the request goes out in its older version (CIPC04 only
    /// carries one).
    static func start(
        requestID: String, intentType: String, phase: RequestPhase, trace: TraceContext?, tracing: Bool
    ) -> (outgoing: TraceContext?, span: (any Span)?) {
        var span: (any Span)?
        var outgoing = trace
        if tracing {
            var parent = ServiceContext.topLevel
            if let trace {
                let carrier = ["traceparent": trace.traceparent, "tracestate": trace.tracestate]
                InstrumentationSystem.instrument.extract(carrier, into: &parent, using: DictionaryExtractor())
            }
            let started = InstrumentationSystem.tracer.startSpan(
                "POST /v1/requests", context: parent, ofKind: .server)
            started.attributes["concierge.request_id"] = requestID
            started.attributes["concierge.intent_type"] = intentType
            started.attributes["concierge.phase"] = phase.rawValue
            var carrier: [String: String] = [:]
            InstrumentationSystem.instrument.inject(started.context, into: &carrier, using: DictionaryInjector())
            // No tracer bootstrapped (nothing injected): the caller's context still goes on.
            outgoing =
                TraceContext.incoming(traceparent: carrier["traceparent"], tracestate: carrier["tracestate"]) ?? trace
            span = started
        }
        return (outgoing, span)
    }

    /// Ends the span of a request with its outcome.
    static func end(_ span: (any Span)?, outcome: String) {
        guard let span else { return }
        span.attributes["concierge.outcome"] = outcome
        if outcome != "final" { span.setStatus(SpanStatus(code: .error, message: outcome)) }
        span.end()
    }

    /// The trace context a conversation turn carries to the broker, and the gateway's span for it (with
    /// `tracing`): as for a request, a server span named after the turn's route (`POST /v1/conversations`,
    /// `POST /v1/conversations/{id}/turns`) whose parent is `trace`, open until the turn ends (``end(_:outcome:)``),
    /// with `concierge.request_id` (the turn's first attempt), `concierge.conversation_id` and, when known,
    /// `concierge.intent_type`.
    static func startTurn(
        route: String, requestID: String, conversationID: String, intentType: String?, trace: TraceContext?,
        tracing: Bool
    ) -> (outgoing: TraceContext?, span: (any Span)?) {
        guard tracing else { return (trace, nil) }
        var parent = ServiceContext.topLevel
        if let trace {
            let carrier = ["traceparent": trace.traceparent, "tracestate": trace.tracestate]
            InstrumentationSystem.instrument.extract(carrier, into: &parent, using: DictionaryExtractor())
        }
        let span = InstrumentationSystem.tracer.startSpan(route, context: parent, ofKind: .server)
        span.attributes["concierge.request_id"] = requestID
        span.attributes["concierge.conversation_id"] = conversationID
        if let intentType { span.attributes["concierge.intent_type"] = intentType }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(span.context, into: &carrier, using: DictionaryInjector())
        // No tracer bootstrapped (nothing injected): the caller's context still goes on.
        let outgoing =
            TraceContext.incoming(traceparent: carrier["traceparent"], tracestate: carrier["tracestate"]) ?? trace
        return (outgoing, span)
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
