import DequeModule

/// One intent type's queue of requests waiting for a worker, first in first out (re-dispatched jobs go to the
/// front), that owns its count.
///
/// A request can leave the queue from anywhere (its deadline sheds it, the hard limit or a shutdown ends it). Removing
/// it from the middle of a deque would cost a search, so the queue keeps the entry and forgets its ticket instead:
/// ``count`` is always the number of requests really waiting, and entries whose ticket is gone are skipped (and
/// compacted away when they outnumber the live ones).
struct RequestQueue {
    private struct Entry {
        let request: RequestID
        let ticket: UInt64
        let arrival: UInt64
    }

    private var entries: Deque<Entry> = []
    /// Tickets of the entries still waiting (the request's state holds the same ticket).
    private var live: Set<UInt64> = []

    /// Requests waiting (entries whose request left the queue do not count).
    var count: Int { live.count }
    var isEmpty: Bool { live.isEmpty }

    /// Adds a request at the back (or the front) with a ticket unique to this stay in the queue.
    mutating func enqueue(_ request: RequestID, ticket: UInt64, arrival: UInt64, atFront: Bool = false) {
        live.insert(ticket)
        let entry = Entry(request: request, ticket: ticket, arrival: arrival)
        if atFront { entries.prepend(entry) } else { entries.append(entry) }
    }

    /// Removes a request that leaves the queue other than at the head. Returns false when the ticket was not queued.
    @discardableResult
    mutating func remove(ticket: UInt64) -> Bool {
        guard live.remove(ticket) != nil else { return false }
        if entries.count > 64 && entries.count > 2 * live.count {
            let live = self.live
            entries = Deque(entries.filter { live.contains($0.ticket) })
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
        live.remove(entry.ticket)
        return (entry.request, entry.ticket)
    }

    /// Every waiting request, head first.
    var waiting: [RequestID] { entries.filter { live.contains($0.ticket) }.map(\.request) }

    /// Entries kept, live or not (for invariant checks: never fewer than ``count``).
    var storedEntries: Int { entries.count }

    private mutating func skipGone() {
        while let first = entries.first, !live.contains(first.ticket) { entries.removeFirst() }
    }
}
