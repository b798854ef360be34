/// A number the broker hands out in sequence (request, worker and job ids) as a dictionary key that hashes in a few
/// instructions.
///
/// The standard library hashes an integer key with SipHash-1-3 on every lookup, about 110 instructions; the broker
/// loop looks up a request, its worker and its job some eighteen times per request (`Docs/PROFILES.md`).
/// These numbers are the broker's own, never chosen by a peer, so there is no hash flooding to defend against: a
/// multiply-xorshift mix of the number and the table's seed (which keeps tables of different sizes from sharing a
/// bucket order) spreads them as well.
struct SerialKey: Hashable {
    let value: UInt64

    init(_ value: UInt64) { self.value = value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }

    /// What `Dictionary` asks for (`Hashable`'s own requirement behind `hashValue`): the mix, not SipHash.
    func _rawHashValue(seed: Int) -> Int {
        var mixed = value ^ UInt64(UInt(bitPattern: seed))
        mixed = (mixed ^ (mixed >> 31)) &* 0x7FB5_D329_728E_A185
        mixed = (mixed ^ (mixed >> 27)) &* 0x81DA_DEF4_BC2D_D44D
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 33))
    }
}

/// The request, worker and job tables are looked up by the plain number.
extension Dictionary where Key == SerialKey {
    subscript(_ id: UInt64) -> Value? {
        get { self[SerialKey(id)] }
        set { self[SerialKey(id)] = newValue }
        _modify { yield &self[SerialKey(id)] }
    }

    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> Value? { removeValue(forKey: SerialKey(id)) }

    func index(forKey id: UInt64) -> Index? { index(forKey: SerialKey(id)) }
}
