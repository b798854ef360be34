/// A byte string as a dictionary key, hashed once, word by word, with this process's random seed (``DigestKeyed``,
/// as ``RequestKey`` is), instead of by feeding every byte to `Hasher` on each lookup.
///
/// The broker looks up a worker by its routing id for every RESULT and an intent type by its name for every
/// REQUEST; with `[UInt8]` keys each lookup ran SipHash over the bytes one at a time (about 1% of the broker loop's
/// instructions, `Hasher._combine(UInt8)` and its set-up and finalization).
struct ByteKey: DigestKeyed {
    let bytes: [UInt8]
    let digest: UInt64

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        digest = RequestKey.mix(bytes, seed: Self.seed)
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        lhs.digest == rhs.digest && lhs.bytes == rhs.bytes
    }

    /// Random per process.
    private static let seed = UInt64.random(in: .min ... .max)
}
