/// A byte string as a dictionary key, hashed once, word by word, with this process's random seed (as
/// ``RequestKey`` is), instead of by feeding every byte to `Hasher` on each lookup.
///
/// The broker looks up a worker by its routing id for every RESULT and an intent type by its name for every
/// REQUEST; with `[UInt8]` keys each lookup ran SipHash over the bytes one at a time (about 1% of the broker loop's
/// instructions, `Hasher._combine(UInt8)` and its set-up and finalization).
struct ByteKey: Hashable {
    let bytes: [UInt8]
    private let digest: UInt64

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        digest = RequestKey.mix(bytes, seed: Self.seed)
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        lhs.digest == rhs.digest && lhs.bytes == rhs.bytes
    }

    func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    /// The digest (keyed by this process's random seed, so a peer cannot choose ids that collide) mixed with the
    /// table's seed, without a pass of SipHash.
    func _rawHashValue(seed: Int) -> Int {
        var mixed = digest ^ UInt64(UInt(bitPattern: seed))
        mixed = (mixed ^ (mixed >> 31)) &* 0x7FB5_D329_728E_A185
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    /// Random per process.
    private static let seed = UInt64.random(in: .min ... .max)
}
