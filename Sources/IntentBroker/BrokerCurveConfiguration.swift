public import ZeroMQ

/// CURVE security for a ``Broker``: its secret key, and which public keys may connect as clients (frontend)
/// and as workers (backend).
///
/// With CURVE on, every connection is encrypted and authenticated: the broker's ZAP handler admits a peer only
/// if its public key is on the allowlist of the socket it connects to, so a client key cannot register as a
/// worker, nor a worker key submit requests. Clients and workers must know the broker's public key
/// (``CurveSecretKey/publicKey()`` of ``secretKey``).
public struct BrokerCurveConfiguration: Sendable {
    /// The broker's long-term secret key (both sockets use it).
    public var secretKey: CurveSecretKey
    /// Public keys admitted on the frontend (clients).
    public var clientKeys: Set<CurvePublicKey>
    /// Public keys admitted on the backend (workers).
    public var workerKeys: Set<CurvePublicKey>

    public init(secretKey: CurveSecretKey, clientKeys: Set<CurvePublicKey>, workerKeys: Set<CurvePublicKey>) {
        self.secretKey = secretKey
        self.clientKeys = clientKeys
        self.workerKeys = workerKeys
    }
}
