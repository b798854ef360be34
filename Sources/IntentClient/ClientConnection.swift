import IntentWire

/// The connection the client's state machine sends through: a sink for frames (refusing a message's first frame
/// only once libzmq has given the connection up), which it can replace by a connection to another endpoint.
///
/// The loop implements it over a DEALER and its monitor (``ClientSocketConnection``); rule tests over frames in
/// memory.
protocol ClientConnection: WireSink {
    /// Replaces the connection by a new one to `endpoint`, with the same routing id and keys; false (and the old
    /// connection kept) if it cannot be made.
    mutating func reconnect(to endpoint: String) -> Bool

    /// The connection events not yet handed to the state machine (read when a send is refused, to tell why).
    /// `handshakeSucceededBefore`: whether a handshake ever completed (a connection breaking off during the handshake
    /// then means the broker went away, not that it requires CURVE).
    mutating func takeEvents(handshakeSucceededBefore: Bool) -> [ClientConnectionEvent]
}
