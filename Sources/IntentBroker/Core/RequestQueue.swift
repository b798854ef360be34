import DequeModule

/// One intent type's queue of requests waiting for a worker, first in first out (re-dispatched jobs go to the
/// front), that owns its count.
///
/// A request can leave the queue from anywhere (its deadline sheds it, the hard limit or a shutdown ends it). Removing
/// it from the middle of a deque would cost a search, so the queue keeps the entry and remembers its ticket as gone
/// instead: ``count`` is always the number of requests really waiting, and gone entries are skipped when they reach
/// the head (and compacted away when they pile up). The common path — enqueue, then leave at the head — never hashes.
struct RequestQueue {
    private struct Entry {
        let request: RequestID
        let ticket: UInt64
        let arrival: UInt64
    }

    private var entries: Deque<Entry> = []
    /// Tickets of entries still in `entries` whose request left the queue.
    private var gone: Set<UInt64> = []

    /// Requests waiting (entries whose request left the queue do not count).
    var count: Int { entries.count - gone.count }
    var isEmpty: Bool { count == 0 }

    /// Adds a request at the back (or the front) with a ticket unique to this stay in the queue.
    mutating func enqueue(_ request: RequestID, ticket: UInt64, arrival: UInt64, atFront: Bool = false) {
        let entry = Entry(request: request, ticket: ticket, arrival: arrival)
        if atFront { entries.prepend(entry) } else { entries.append(entry) }
    }

    /// Removes a waiting request that leaves the queue other than at the head. The caller knows it is waiting here
    /// with this ticket (the request's state says so); returns false for a ticket already gone.
    @discardableResult
    mutating func remove(ticket: UInt64) -> Bool {
        guard gone.insert(ticket).inserted else { return false }
        if gone.count > 64 && gone.count * 2 > entries.count {
            let gone = self.gone
            entries = Deque(entries.filter { !gone.contains($0.ticket) })
            self.gone.removeAll()
        }
        return true
    }

    /// The arrival time of the request at the head (the oldest waiting, unless a re-dispatched job went first).
    mutating func headArrival() -> UInt64? {
        skipGone()
        return entries.first?.arrival
    }

    /// Takes the request at the head.
    mutating func popFirst() -> (request: RequestID, ticket: UInt64)? {
        skipGone()
        guard let entry = entries.popFirst() else { return nil }
        return (entry.request, entry.ticket)
    }

    /// Every waiting request, head first.
    var waiting: [RequestID] { entries.filter { !gone.contains($0.ticket) }.map(\.request) }

    /// Entries kept, waiting or gone (for invariant checks: never fewer than ``count``).
    var storedEntries: Int { entries.count }

    private mutating func skipGone() {
        guard !gone.isEmpty else { return }
        while let first = entries.first, gone.remove(first.ticket) != nil { entries.removeFirst() }
    }
}
