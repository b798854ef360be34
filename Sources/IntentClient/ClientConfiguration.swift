public import ZeroMQ

/// Everything a ``ConciergeClient`` can be told.
public struct ClientConfiguration: Sendable {
    /// The broker's frontend endpoint.
    public var brokerEndpoint: String
    /// The connection's routing id. A stable one lets a reconnected client ask STATUS about requests it sent
    /// before (the broker keys requests by routing id and request id). Defaults to a random one per client.
    public var routingID: String
    /// How often the client pings a quiet broker.
    public var heartbeatInterval: Duration
    /// The broker is considered lost after this many silent intervals; requests in flight then fail with
    /// ``ClientError/Code/connectionLost`` (their results stay available to ``ConciergeClient/status(of:)``
    /// once the broker is back).
    public var heartbeatLiveness: Int
    /// CURVE: the broker's public key and this client's key pair (its public key must be on the broker's client
    /// allowlist); nil: no encryption (only for brokers on loopback or `ipc://`).
    public var curve: CurveClientKeys?

    public init(
        brokerEndpoint: String = "tcp://127.0.0.1:5555",
        routingID: String? = nil,
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        curve: CurveClientKeys? = nil
    ) {
        self.brokerEndpoint = brokerEndpoint
        self.routingID = routingID ?? "client-\(UInt64.random(in: 0...UInt64.max))"
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.curve = curve
    }
}
