import IntentWire

/// A moment of a request that a span marks (Docs/TRACING.md), told by the core to the shell, which owns the spans:
/// the core stays free of tracers and clocks other than its own. Only made with ``BrokerConfiguration/tracing``.
enum TraceEvent {
    /// What a span event of `concierge.request` names.
    enum Mark: String {
        /// The progress reply went out at the deadline (section 6.3).
        case progress
        /// The client cancelled the request (section 4.10.2).
        case cancel
    }

    /// A request was accepted: `concierge.request` starts, a child of `parent` (the caller's trace context).
    case started(RequestID, requestID: [UInt8], intentType: [UInt8], phase: RequestPhase, parent: TraceContext?)
    /// A keyed request got its key's stored reply (`replay`): a `concierge.request` of its own, at once ended.
    case replayed(ClientRequest)
    /// Something happened to a request: an event of its span.
    case event(RequestID, Mark)
    /// The request ended with `outcome` (``BrokerCore/end(_:status:payload:outcome:now:)``); `lateFinal` when a
    /// progress reply went out before.
    case ended(RequestID, outcome: String, lateFinal: Bool)
}
