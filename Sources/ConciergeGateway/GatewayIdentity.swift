/// Who a request comes from: the identity a bearer token stands for (`--tokens`), or ``anonymous`` without tokens.
/// Each identity has a broker connection of its own, so idempotency keys, requests and conversations of one
/// identity are never visible to another.
public struct GatewayIdentity: Sendable, Hashable {
    /// The identity's name, as in the tokens file.
    public let name: String

    /// An identity named `name`.
    public init(name: String) { self.name = name }

    /// The caller when the gateway has no tokens.
    public static let anonymous = GatewayIdentity(name: "anonymous")
}
