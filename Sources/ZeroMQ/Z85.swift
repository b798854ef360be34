import CZeroMQ

/// Z85, ZeroMQ's printable encoding of binary data (ZeroMQ RFC 32), through libzmq's `zmq_z85_encode` and
/// `zmq_z85_decode`. CURVE keys are 32 bytes in binary and 40 characters in Z85.
public enum Z85 {
    /// The 85 characters Z85 uses, in value order.
    public static let alphabet = Array(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8
    )

    /// Encodes `bytes` (a multiple of 4 bytes long) as Z85 text, 5 characters per 4 bytes; nil when the length is
    /// not a multiple of 4.
    public static func encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        let encoded = bytes.withUnsafeBufferPointer { source in
            text.withUnsafeMutableBufferPointer { zmq_z85_encode($0.baseAddress, source.baseAddress, source.count) }
        }
        guard encoded != nil else { return nil }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Decodes Z85 text (a multiple of 5 characters long, only Z85 characters, each group of 5 at most
    /// 0xFFFFFFFF); nil when `text` is not valid Z85.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard !characters.isEmpty, characters.count % 5 == 0, characters.allSatisfy({ alphabet.contains($0) })
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: characters.count / 5 * 4)
        let decoded = bytes.withUnsafeMutableBufferPointer { destination in
            text.withCString { zmq_z85_decode(destination.baseAddress, $0) }
        }
        return decoded == nil ? nil : bytes
    }
}
