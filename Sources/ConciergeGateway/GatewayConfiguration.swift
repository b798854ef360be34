/// How `concierge gateway` listens and which brokers it talks to (Docs/GATEWAY.md).
public struct GatewayConfiguration: Sendable {
    /// The broker endpoints, in failover order.
    public var brokerEndpoints: [String]

    /// Creates a configuration.
    public init(brokerEndpoints: [String]) {
        self.brokerEndpoints = brokerEndpoints
    }
}
