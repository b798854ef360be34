/// A CURVE public key: 32 bytes, written as 40 characters of Z85.
///
/// Public keys identify peers: a broker lists the public keys it admits, and clients and workers need the
/// broker's public key to connect. Printing one is harmless (``description`` is the Z85 text).
public struct CurvePublicKey: Sendable, Hashable, CustomStringConvertible {
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

    /// The key as 40 characters of Z85.
    public var z85: String { Z85.encode(bytes) ?? "" }

    public var description: String { z85 }
}

/// `bytes` when they are a CURVE key's 32 bytes.
func _checkedCurveKey(_ bytes: [UInt8]) throws(CurveKeyError) -> [UInt8] {
    guard bytes.count == 32 else {
        throw CurveKeyError(code: .malformedKey, message: "a CURVE key has 32 bytes, not \(bytes.count)")
    }
    return bytes
}

/// Decodes a 40-character Z85 CURVE key, explaining what is wrong otherwise.
func _decodeCurveKey(_ text: String) throws(CurveKeyError) -> [UInt8] {
    let count = text.utf8.count
    guard count == 40 else {
        throw CurveKeyError(
            code: .malformedKey,
            message: "a CURVE key is 40 Z85 characters, not \(count)"
        )
    }
    if let bad = text.utf8.first(where: { !Z85.alphabet.contains($0) }) {
        let shown = bad >= 0x20 && bad < 0x7F ? "\"\(Character(Unicode.Scalar(bad)))\"" : "byte \(bad)"
        throw CurveKeyError(code: .malformedKey, message: "a CURVE key is Z85 text; \(shown) is not a Z85 character")
    }
    guard let bytes = Z85.decode(text), bytes.count == 32 else {
        throw CurveKeyError(code: .malformedKey, message: "not valid Z85 (a group of 5 characters exceeds 32 bits)")
    }
    return bytes
}
