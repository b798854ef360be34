public import IntentWire
public import ServiceContextModule
import Tracing

/// W3C trace context to and from `ServiceContext`, through the instrument bootstrapped in `InstrumentationSystem`
/// (Swift OTel's W3C propagator once ``TracingBootstrap`` ran; without it, the no-op instrument: nothing is read or
/// written, and the conversions give a top-level context and nil).
extension IntentWire.TraceContext {
    /// A service context whose span context is this trace context (the remote parent of spans started in it), on
    /// top of `base`.
    public func serviceContext(base: ServiceContext = .topLevel) -> ServiceContext {
        var context = base
        var headers = ["traceparent": traceparent]
        if !tracestate.isEmpty { headers["tracestate"] = tracestate }
        InstrumentationSystem.instrument.extract(headers, into: &context, using: HeaderExtractor())
        return context
    }

    /// The trace context of `context`'s span, as the instrument injects it; nil when it yields no valid
    /// `traceparent` (no span, or tracing not bootstrapped).
    public init?(serviceContext context: ServiceContext) {
        var headers: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &headers, using: HeaderInjector())
        guard let traceparent = headers["traceparent"],
            let value = try? IntentWire.TraceContext(traceparent: traceparent, tracestate: headers["tracestate"] ?? "")
        else { return nil }
        self = value
    }

    /// The trace context of HTTP-style headers (`traceparent`, `tracestate`; names case-insensitive): nil when there
    /// is no `traceparent`.
    /// - Throws: `TraceContextError` when the headers break the rules (Schemas/PROTOCOL.md section 4.2).
    public init?(headers: [(name: String, value: String)]) throws(TraceContextError) {
        let parent = headers.first { $0.name.lowercased() == "traceparent" }?.value
        let state = headers.first { $0.name.lowercased() == "tracestate" }?.value ?? ""
        guard let parent else { return nil }
        try self.init(traceparent: parent, tracestate: state)
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
