import ConciergeJSON
import HTTPTypes
import Hummingbird
import IntentClient
import IntentWire
import Tracing

/// The W3C trace context of an HTTP request (`traceparent`, `tracestate`), when valid: W3C Trace Context Level 1
/// says a receiver ignores an invalid `traceparent` (and then any `tracestate`) and starts a new trace, so an
/// invalid one is not an error here.
struct IncomingTrace: Sendable, Hashable {
    let traceparent: String
    let tracestate: String

    init?(traceparent: String?, tracestate: String?) {
        guard let traceparent, Self.isValid(traceparent: traceparent) else { return nil }
        self.traceparent = traceparent
        let state = tracestate ?? ""
        // A tracestate the broker would refuse is dropped: the trace id and parent still get through.
        let printable = state.utf8.allSatisfy { (0x20...0x7E).contains($0) }
        self.tracestate = printable && state.utf8.count <= 512 ? state : ""
    }

    /// As the wire carries it (nil only if the wire's rules are stricter than the checks here).
    var traceContext: TraceContext? { try? TraceContext(traceparent: traceparent, tracestate: tracestate) }

    init?(headers: HTTPFields) {
        self.init(traceparent: headers[GatewayHeaders.traceparent], tracestate: headers[GatewayHeaders.tracestate])
    }

    /// W3C Trace Context Level 1, section 3.2: version `00` exactly 55 bytes; a later version (not `ff`) whose first
    /// 55 bytes parse so and that is 55 bytes long or goes on with `-`.
    static func isValid(traceparent: String) -> Bool {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55 else { return false }
        func hex(_ range: Range<Int>) -> Bool {
            bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        func zero(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { $0 == 0x30 } }
        guard hex(0..<2), bytes[2] == 0x2D, hex(3..<35), bytes[35] == 0x2D, hex(36..<52), bytes[52] == 0x2D,
            hex(53..<55), !zero(3..<35), !zero(36..<52)
        else { return false }
        let version = String(decoding: bytes[0..<2], as: UTF8.self)
        if version == "ff" { return false }
        if version == "00" { return bytes.count == 55 }
        return bytes.count == 55 || bytes[55] == 0x2D
    }
}

/// Where a request's trace goes: the one place that knows how the gateway hands a trace context to the client.
enum GatewayTrace {
    /// Sends the request. Without gateway tracing, `trace` (the caller's headers) goes to the broker unchanged;
    /// with it, a server span `POST /v1/requests` whose parent is `trace` is open until the request ends, and the
    /// broker gets the span's context.
    ///
    /// The client's `traceContext:` parameter (CIPC04) carries the context; without one (no header, no tracing) the
    /// request goes out in its older version, as before tracing.
    static func send(
        client: ConciergeClient, intentType: String, phase: RequestPhase, body: [UInt8], deadline: Duration?,
        requestID: String, idempotencyKey: String?, trace: IncomingTrace?, tracing: Bool
    ) -> (stream: ConciergeClient.ReplyStream, span: (any Span)?) {
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
            outgoing = IncomingTrace(traceparent: carrier["traceparent"], tracestate: carrier["tracestate"]) ?? trace
            span = started
        }
        let stream = client.send(
            intentType: intentType, phase: phase, body: body, deadline: deadline, requestID: requestID,
            idempotencyKey: idempotencyKey, traceContext: outgoing?.traceContext)
        return (stream, span)
    }

    /// Ends the span of a request with its outcome.
    static func end(_ span: (any Span)?, outcome: String) {
        guard let span else { return }
        span.attributes["concierge.outcome"] = outcome
        if outcome != "final" { span.setStatus(SpanStatus(code: .error, message: outcome)) }
        span.end()
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
