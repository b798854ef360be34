extension BrokerRequest {
    /// Whose lane of its intent type's queue the request waits in (fairness across clients, PROTOCOL.md 6.5): the
    /// client's CURVE key when it has one (all its connections share a lane), else its connection's routing id.
    var queueClient: [UInt8] { identity.isEmpty ? key.client : identity }
}
