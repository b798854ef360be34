import DequeModule
import IntentWire

/// Final replies kept for STATUS queries, for a bounded time, count and memory (section 6.4 of the protocol).
///
/// Generic over the body so that the broker keeps the libzmq message it forwarded (no copy) while tests keep bytes.
/// What a result costs (``cost(of:for:)``: its body, its key and a constant for the entry) is charged to
/// ``byteBudget``; past the count or the budget the oldest go first.
///
/// Every final reply is stored, and in a steady state every store evicts the oldest result: the store is on the
/// broker's hot path (issue 36: 14% of the loop thread's samples as a `Dictionary` keyed by ``RequestKey`` with a
/// `Deque` of keys for the order, most of it cache misses in the table and retains of the keys' arrays). So the
/// results live in one `Deque`, oldest first, each with its key, and the index is a small open-addressing table of
/// (digest, sequence number) pairs (linear probing, backward-shift deletion): a store or an eviction probes 16-byte
/// slots and compares a key's bytes only when the digests match.
struct ResultStore<Body> {
    struct Result {
        let isError: Bool
        let phase: StaticString
        let payload: ReplyPayload<Body>
    }

    private struct Entry {
        let key: RequestKey
        let result: Result
        let cost: Int
    }

    /// A slot of the index: a key's digest and its entry's sequence number plus one (0: an empty slot).
    private struct Slot {
        var digest: UInt64 = 0
        var sequence: UInt64 = 0
    }

    /// The results, oldest first; nil where a result was replaced by a later one under the same key.
    private var entries: Deque<Entry?> = []
    /// Their expiry times, in the same order (``replaced`` for a nil entry): the order's checks read these, never
    /// an entry (copying one out retains its key's arrays and its body, cold by the time it is the oldest).
    private var expiries: Deque<UInt64> = []
    private static var replaced: UInt64 { .max }
    /// The sequence number of `entries.first`.
    private var firstSequence: UInt64 = 0
    private var slots: [Slot] = []
    let ttl: UInt64
    let capacity: Int
    let byteBudget: Int
    /// Bytes charged for the results kept (see ``cost(of:for:)``).
    private(set) var bytes = 0
    /// Results kept.
    private(set) var count = 0

    init(ttl: UInt64, capacity: Int, byteBudget: Int = .max) {
        self.ttl = ttl
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// What keeping `result` for `key` costs, roughly: the body's bytes, the key's, and the memory of an entry (the
    /// table's slot, the message's header, the order's slot) measured in `Tests/python/test_memory.py`.
    static func cost(of result: Result, for key: RequestKey) -> Int {
        let body: Int
        switch result.payload {
        case .bytes(let bytes): body = bytes.count
        case .body(let message): body = (message as? any StoredBody)?.storedByteCount ?? 0
        }
        return body + key.client.count + key.id.count + entryOverhead
    }

    /// The memory of one entry besides its bytes: measured, about 510 bytes (Scripts/bench-memory: 1,915 bytes of
    /// RSS for a 1,405-byte reply).
    static var entryOverhead: Int { 512 }

    mutating func store(_ result: Result, for key: RequestKey, now: UInt64) {
        guard capacity > 0 else { return }
        let cost = Self.cost(of: result, for: key)
        let sequence = firstSequence + UInt64(entries.count)
        if let slot = find(key) {
            // Replaced: the earlier result's place in the order stays empty until it reaches the front.
            let offset = Int(slots[slot].sequence - 1 - firstSequence)
            bytes -= entries[offset]!.cost
            entries[offset] = nil
            expiries[offset] = Self.replaced
            count -= 1
            slots[slot].sequence = sequence + 1
        } else {
            if (count + 1) * 2 > slots.count { grow() }
            insert(Slot(digest: key.digest, sequence: sequence + 1))
        }
        entries.append(Entry(key: key, result: result, cost: cost))
        expiries.append(now + ttl)
        bytes += cost
        count += 1
        while count > capacity || bytes > byteBudget { removeOldest() }
    }

    func result(for key: RequestKey) -> Result? {
        guard let slot = find(key) else { return nil }
        return entries[Int(slots[slot].sequence - 1 - firstSequence)]?.result
    }

    /// Drops results whose time is up.
    mutating func expire(now: UInt64) {
        while true {
            dropReplacedAtFront()
            guard let expiry = expiries.first, expiry <= now else { return }
            removeOldest()
        }
    }

    // MARK: The index

    private var mask: Int { slots.count - 1 }

    private func home(_ digest: UInt64) -> Int { Int(truncatingIfNeeded: digest) & mask }

    /// The slot of `key`'s result, if one is kept.
    private func find(_ key: RequestKey) -> Int? {
        guard !slots.isEmpty else { return nil }
        var index = home(key.digest)
        while slots[index].sequence != 0 {
            if slots[index].digest == key.digest,
                entries[Int(slots[index].sequence - 1 - firstSequence)]?.key == key
            {
                return index
            }
            index = (index + 1) & mask
        }
        return nil
    }

    private mutating func insert(_ slot: Slot) {
        var index = home(slot.digest)
        while slots[index].sequence != 0 { index = (index + 1) & mask }
        slots[index] = slot
    }

    /// Empties the slot at `index`, moving later slots of the same run back so that no probe stops short.
    private mutating func vacate(_ index: Int) {
        var hole = index
        var next = index
        while true {
            next = (next + 1) & mask
            let slot = slots[next]
            if slot.sequence == 0 { break }
            // The slot may move into the hole unless its home lies cyclically in (hole, next].
            if (next - home(slot.digest)) & mask >= (next - hole) & mask {
                slots[hole] = slot
                hole = next
            }
        }
        slots[hole] = Slot()
    }

    private mutating func grow() {
        slots = Array(repeating: Slot(), count: max(16, slots.count * 2))
        for (offset, entry) in entries.enumerated() {
            guard let entry else { continue }
            insert(Slot(digest: entry.key.digest, sequence: firstSequence + UInt64(offset) + 1))
        }
    }

    // MARK: The order

    private mutating func dropReplacedAtFront() {
        while expiries.first == Self.replaced {
            expiries.removeFirst()
            entries.removeFirst()
            firstSequence += 1
        }
    }

    /// Removes the oldest result kept.
    private mutating func removeOldest() {
        dropReplacedAtFront()
        guard !expiries.isEmpty, let entry = entries.removeFirst() else { return }  // moved out, not copied
        expiries.removeFirst()
        var index = home(entry.key.digest)
        while slots[index].sequence != firstSequence + 1 { index = (index + 1) & mask }
        vacate(index)
        firstSequence += 1
        bytes -= entry.cost
        count -= 1
    }
}

/// A body whose size the stores charge to their memory budgets.
protocol StoredBody {
    var storedByteCount: Int { get }
    /// A copy of the bytes (conversations read the bodies of their turns).
    var storedBytes: [UInt8] { get }
    /// A body holding a copy of `bytes` (a conversation writes the body of its next turn); nil when it cannot be made.
    static func make(storedBytes: [UInt8]) -> Self?
}

extension Array: StoredBody where Element == UInt8 {
    var storedByteCount: Int { count }
    var storedBytes: [UInt8] { self }
    static func make(storedBytes: [UInt8]) -> [UInt8]? { storedBytes }
}
