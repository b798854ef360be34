import HTTPTypes
import Hummingbird

/// The header names the gateway reads and writes besides the standard ones.
enum GatewayHeaders {
    static let requestID = HTTPField.Name("Concierge-Request-Id")!
    static let deadline = HTTPField.Name("Concierge-Deadline")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let replayed = HTTPField.Name("Idempotent-Replayed")!
    static let conversationID = HTTPField.Name("Conversation-Id")!
    static let traceparent = HTTPField.Name("traceparent")!
    static let tracestate = HTTPField.Name("tracestate")!
}
