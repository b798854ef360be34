/// A trace context that breaks the rules of `Schemas/PROTOCOL.md` section 4.2 (its ``code`` is always
/// `bad-trace-context`); ``message`` says which rule.
public struct TraceContextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable code: `bad-trace-context`.
    public var code: WireErrorCode { .badTraceContext }
    /// What is wrong.
    public let message: String

    init(message: String) {
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
