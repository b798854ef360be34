import IntentWire

/// What becomes of a REQUEST, as ``BrokerCore`` decides it before anything else happens to it.
enum Admission {
    /// Refused at once with this error (its body built), counted against intent type `intentType` when known.
    case refuse(WireErrorCode, body: [UInt8], intentType: Int?)
    /// A duplicate of the keyed request in flight `to`: it gets that request's ending.
    case attach(to: RequestID)
    /// The key's operation ended: its stored ending is sent again.
    case replay(IdempotencyScope)
    /// Accepted, for the intent type at this index; with an idempotency key, the key's scope and attempt number.
    case accept(type: Int, scope: IdempotencyScope?, attempt: Int)

    /// Whether the request is refused.
    var isRefusal: Bool {
        if case .refuse = self { true } else { false }
    }

    /// A refusal whose body is the error object of `code` and `message`.
    static func refuse(_ code: WireErrorCode, _ message: String, intentType: Int? = nil) -> Admission {
        .refuse(code, body: WireBody.error(code, message), intentType: intentType)
    }
}
