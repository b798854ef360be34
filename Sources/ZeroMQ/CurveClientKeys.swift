/// What a CURVE client socket (a Concierge client or worker) needs: the server's public key, to know it talks
/// to the right broker, and its own key pair, which the broker checks against its allowlist.
public struct CurveClientKeys: Sendable, Hashable {
    /// The broker's public key.
    public var serverKey: CurvePublicKey
    /// This peer's own key pair; its public key must be on the broker's allowlist for this peer's role.
    public var keyPair: CurveKeyPair

    public init(serverKey: CurvePublicKey, keyPair: CurveKeyPair) {
        self.serverKey = serverKey
        self.keyPair = keyPair
    }

    /// Keys from files: the broker's public key file and this peer's secret key file (its public key is
    /// derived). See ``CurveKeyFile`` for the format.
    public init(serverKeyFile: String, secretKeyFile: String) throws(CurveKeyError) {
        serverKey = try CurveKeyFile.readPublicKey(path: serverKeyFile)
        keyPair = try CurveKeyPair(secretKey: CurveKeyFile.readSecretKey(path: secretKeyFile))
    }
}
