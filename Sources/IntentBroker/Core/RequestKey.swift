/// Identifies a request: the client connection's routing id plus the caller-chosen request id.
///
/// The in-flight table and the result store look every request up several times; the key's hash is computed once
/// (a word-at-a-time mix of both byte strings, ``DigestKeyed``) instead of feeding every byte to `Hasher` on each
/// lookup.
struct RequestKey: DigestKeyed {
    let client: [UInt8]
    let id: [UInt8]
    let digest: UInt64

    init(client: [UInt8], id: [UInt8]) {
        self.client = client
        self.id = id
        digest = Self.mix(id, seed: Self.mix(client, seed: Self.seed))
    }

    static func == (lhs: RequestKey, rhs: RequestKey) -> Bool {
        lhs.digest == rhs.digest && lhs.id == rhs.id && lhs.client == rhs.client
    }

    /// Random per process, so a client cannot choose request ids that collide.
    private static let seed = UInt64.random(in: .min ... .max)

    /// Folds `bytes` into `seed` eight bytes at a time (multiply-xorshift).
    static func mix(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        bytes.withUnsafeBytes { mix($0, seed: seed) }
    }

    /// Folds `raw` into `seed` eight bytes at a time (multiply-xorshift).
    static func mix(_ raw: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var state = seed ^ UInt64(raw.count)
        var offset = 0
        while offset + 8 <= raw.count {
            state = (state ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            state ^= state >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < raw.count {
            tail |= UInt64(raw[offset]) << shift
            shift += 8
            offset += 1
        }
        state = (state ^ tail) &* 0x94D0_49BB_1331_11EB
        return state ^ (state >> 29)
    }
}
