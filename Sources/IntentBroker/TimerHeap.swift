/// A binary min-heap of request timers (deadline or hard limit). Entries are never removed early: a popped
/// entry whose request is already done is ignored, which keeps every operation O(log n).
struct TimerHeap {
    enum Kind { case deadline, hardLimit }
    struct Entry {
        let time: UInt64
        let kind: Kind
        let request: PendingRequest
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var nextTime: UInt64? { entries.first?.time }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].time < entries[parent].time else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(_ now: UInt64) -> Entry? {
        guard let first = entries.first, first.time <= now else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].time < entries[smallest].time { smallest = left }
            if right < entries.count && entries[right].time < entries[smallest].time { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
