/// What happened to the client's connection, as its monitor reports it (the loop turns libzmq's monitor events into
/// these, so the state machine needs no sockets).
enum ClientConnectionEvent: Equatable {
    /// The connection dropped (libzmq reconnects on its own).
    case disconnected
    /// A connection completed its security handshake: a broker is there.
    case handshakeSucceeded
    /// The connection broke off during the handshake; libzmq retries it. The explanation is kept to explain a later
    /// `connectionLost`.
    case handshakeBrokeOff(String)
    /// The security handshake failed for good (a refused key, a mechanism mismatch): libzmq does not retry.
    case handshakeFailed(String)
}
