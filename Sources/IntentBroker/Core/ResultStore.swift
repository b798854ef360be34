import DequeModule

/// Final replies kept for STATUS queries, for a bounded time and count (section 6.4 of the protocol).
///
/// Generic over the body so that the broker keeps the libzmq message it forwarded (no copy) while tests keep bytes.
struct ResultStore<Body> {
    struct Result {
        let isError: Bool
        let phase: StaticString
        let payload: ReplyPayload<Body>
    }

    private var results: [RequestKey: Result] = [:]
    private var order: Deque<(expiry: UInt64, key: RequestKey)> = []
    let ttl: UInt64
    let capacity: Int

    init(ttl: UInt64, capacity: Int) {
        self.ttl = ttl
        self.capacity = capacity
    }

    var count: Int { results.count }

    mutating func store(_ result: Result, for key: RequestKey, now: UInt64) {
        guard capacity > 0 else { return }
        if results.updateValue(result, forKey: key) == nil {
            order.append((now + ttl, key))
        }
        while results.count > capacity, let oldest = order.popFirst() {
            results.removeValue(forKey: oldest.key)
        }
    }

    func result(for key: RequestKey) -> Result? { results[key] }

    /// Drops results whose time is up.
    mutating func expire(now: UInt64) {
        while let first = order.first, first.expiry <= now {
            order.removeFirst()
            results.removeValue(forKey: first.key)
        }
    }
}
