import IntentWire

extension BrokerRequest {
    /// Whose lane of its intent type's queue the request waits in (fairness across clients, PROTOCOL.md 6.5): the
    /// client's CURVE key when it has one (all its connections share a lane, whatever their scopes), else its
    /// connection's routing id.
    var queueClient: [UInt8] { Self.lane(identity: identity, client: key.client) }

    /// The lane of a client with `identity` (PROTOCOL.md 3.4) on connection `client`: its key, else its routing id.
    /// A scope gets no lane of its own, so a client cannot multiply its share by naming scopes.
    static func lane(identity: [UInt8], client: [UInt8]) -> [UInt8] {
        let key = ClientScope.key(ofIdentity: identity)
        return key.isEmpty ? client : key
    }
}
