import ZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The routing ids of the peers that sent the last messages, so that a message from a known peer reuses its id's
/// array instead of allocating a copy of the frame (two allocations a request in the broker's loop).
///
/// A few connections carry most messages (a client's, the workers'), so a handful of slots, searched from the last
/// hit and replaced in turn, hit nearly always; with more peers than slots it costs a few compares and the copy it
/// would have made anyway.
struct RoutingIDCache {
    private var entries: [[UInt8]] = []
    private var lastHit = 0
    private var nextReplaced = 0
    /// The most ids kept.
    let capacity: Int

    init(capacity: Int = 8) {
        precondition(capacity > 0)
        self.capacity = capacity
        entries.reserveCapacity(capacity)
    }

    /// Frame `index` of `message` as an array: a kept one with the same bytes, or a new copy (then kept).
    mutating func bytes(_ message: borrowing ZMQMultipart, frame index: Int) -> [UInt8] {
        let found = message.withBytes(index) { frame -> Int? in
            let count = entries.count
            for step in 0..<count {
                let slot = (lastHit + step) % count
                if Self.equal(entries[slot], frame) { return slot }
            }
            return nil
        }
        if let found {
            lastHit = found
            return entries[found]
        }
        let id = message.bytes(index)
        if entries.count < capacity {
            entries.append(id)
            lastHit = entries.count - 1
        } else {
            entries[nextReplaced] = id
            lastHit = nextReplaced
            nextReplaced = (nextReplaced + 1) % capacity
        }
        return id
    }

    private static func equal(_ id: [UInt8], _ frame: UnsafeRawBufferPointer) -> Bool {
        id.count == frame.count
            && id.withUnsafeBytes { stored in
                stored.count == 0 || memcmp(stored.baseAddress!, frame.baseAddress!, stored.count) == 0
            }
    }
}
