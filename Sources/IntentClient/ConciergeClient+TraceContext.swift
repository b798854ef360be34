public import IntentWire
import Tracing

/// Trace context (`CIPC04`, PROTOCOL.md 4.2): a REQUEST or TURN carries the caller's W3C trace context, so that the
/// broker's and the handler's spans join the caller's trace (Docs/TRACING.md).
extension ConciergeClient {
    /// The trace context a message carries: `explicit` when given, else what the bootstrapped instrument injects
    /// from the task's current `ServiceContext` (nil when there is none, or it yields no valid `traceparent`: the
    /// message then goes out in its older version, as before tracing).
    public static func outgoingTraceContext(_ explicit: TraceContext? = nil) -> TraceContext? {
        if let explicit { return explicit }
        guard let context = ServiceContext.current else { return nil }
        var headers: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &headers, using: HeaderInjector())
        guard let traceparent = headers["traceparent"] else { return nil }
        return try? TraceContext(traceparent: traceparent, tracestate: headers["tracestate"] ?? "")
    }
}

/// Writes what an instrument injects into a dictionary of header names (lowercased) to values.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key.lowercased()] = value
    }
}
