import CZeroMQ

/// A CURVE secret key: 32 bytes, written as 40 characters of Z85. Never printed: ``description`` is redacted.
///
/// Each party keeps its own secret key private (a file with mode 0600, see ``CurveKeyFile``); its public key
/// is derived from it with ``publicKey``.
public struct CurveSecretKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's 32 bytes.
    public let bytes: [UInt8]

    /// A key from its 32 raw bytes.
    public init(bytes: [UInt8]) throws(CurveKeyError) {
        self.bytes = try _checkedCurveKey(bytes)
    }

    /// A key from its 40-character Z85 text.
    public init(z85: String) throws(CurveKeyError) {
        bytes = try _decodeCurveKey(z85)
    }

    /// The key as 40 characters of Z85 (for writing key files; never log it).
    public var z85: String { Z85.encode(bytes) ?? "" }

    /// The matching public key (`zmq_curve_public`).
    public func publicKey() throws(CurveKeyError) -> CurvePublicKey {
        var output = [CChar](repeating: 0, count: 41)
        let rc = z85.withCString { secret in
            output.withUnsafeMutableBufferPointer { zmq_curve_public($0.baseAddress, secret) }
        }
        guard rc == 0 else {
            throw CurveKeyError(
                code: .curveUnavailable,
                message: "zmq_curve_public failed: \(ZMQError.last) (libzmq built without CURVE?)"
            )
        }
        return try CurvePublicKey(z85: output.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    public var description: String { "CurveSecretKey(redacted)" }
}
