import DequeModule
import IntentWire

/// Final replies kept for STATUS queries, for a bounded time, count and memory (section 6.4 of the protocol).
///
/// Generic over the body so that the broker keeps the libzmq message it forwarded (no copy) while tests keep bytes.
/// What a result costs (``cost(of:for:)``: its body, its key and a constant for the entry) is charged to
/// ``byteBudget``; past the count or the budget the oldest go first.
struct ResultStore<Body> {
    struct Result {
        let isError: Bool
        let phase: StaticString
        let payload: ReplyPayload<Body>
    }

    private struct Entry {
        let result: Result
        let cost: Int
    }

    private var results: [RequestKey: Entry] = [:]
    private var order: Deque<(expiry: UInt64, key: RequestKey)> = []
    let ttl: UInt64
    let capacity: Int
    let byteBudget: Int
    /// Bytes charged for the results kept (see ``cost(of:for:)``).
    private(set) var bytes = 0

    init(ttl: UInt64, capacity: Int, byteBudget: Int = .max) {
        self.ttl = ttl
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    var count: Int { results.count }

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
        let entry = Entry(result: result, cost: Self.cost(of: result, for: key))
        if let replaced = results.updateValue(entry, forKey: key) {
            bytes -= replaced.cost
        } else {
            order.append((now + ttl, key))
        }
        bytes += entry.cost
        while results.count > capacity || bytes > byteBudget, let oldest = order.popFirst() {
            remove(oldest.key)
        }
    }

    func result(for key: RequestKey) -> Result? { results[key]?.result }

    /// Drops results whose time is up.
    mutating func expire(now: UInt64) {
        while let first = order.first, first.expiry <= now {
            order.removeFirst()
            remove(first.key)
        }
    }

    private mutating func remove(_ key: RequestKey) {
        if let gone = results.removeValue(forKey: key) { bytes -= gone.cost }
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
