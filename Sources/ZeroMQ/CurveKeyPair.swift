import CZeroMQ

/// A CURVE key pair: a public key to share and the secret key it belongs to.
public struct CurveKeyPair: Sendable, Hashable {
    public let publicKey: CurvePublicKey
    public let secretKey: CurveSecretKey

    /// The pair of a secret key (its public key is derived with `zmq_curve_public`).
    public init(secretKey: CurveSecretKey) throws(CurveKeyError) {
        self.secretKey = secretKey
        publicKey = try secretKey.publicKey()
    }

    /// A new random key pair (`zmq_curve_keypair`, from libsodium's random source).
    public static func generate() throws(CurveKeyError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        let rc = publicText.withUnsafeMutableBufferPointer { publicBuffer in
            secretText.withUnsafeMutableBufferPointer { zmq_curve_keypair(publicBuffer.baseAddress, $0.baseAddress) }
        }
        guard rc == 0 else {
            throw CurveKeyError(
                code: .curveUnavailable,
                message: "zmq_curve_keypair failed: \(ZMQError.last) (libzmq built without CURVE?)"
            )
        }
        let secret = try CurveSecretKey(z85: secretText.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        let pair = try CurveKeyPair(secretKey: secret)
        // Zero our copies of the secret text (the returned key still holds the bytes).
        for index in secretText.indices { secretText[index] = 0 }
        return pair
    }
}
