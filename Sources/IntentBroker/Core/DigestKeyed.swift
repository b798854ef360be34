/// A dictionary key whose hash is a digest computed once, when the key is made (``RequestKey``, ``ByteKey``), instead
/// of by feeding every byte of the key to `Hasher` on each lookup.
///
/// The digest must already be keyed by a per-process random seed, so that a peer cannot choose keys that collide.
protocol DigestKeyed: Hashable {
    /// The key's bytes mixed with a per-process random seed.
    var digest: UInt64 { get }
}

extension DigestKeyed {
    func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    /// What `Dictionary` asks for: the digest mixed with the table's seed, without a pass of SipHash on every lookup.
    func _rawHashValue(seed: Int) -> Int {
        var mixed = digest ^ UInt64(UInt(bitPattern: seed))
        mixed = (mixed ^ (mixed >> 31)) &* 0x7FB5_D329_728E_A185
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }
}
