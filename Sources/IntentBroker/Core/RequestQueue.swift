import DequeModule

/// One intent type's queue of requests waiting for a worker, fair across clients: each client (its CURVE
/// key, else its connection's routing id) has a lane of its own, first in first out, and the lanes take turns (round
/// robin: every job costs one) when a worker takes the next job. A re-dispatched job goes to the front of its lane,
/// and its lane takes the next turn. The queue owns its count.
///
/// A request can leave the queue from anywhere (its deadline sheds it, the hard limit or a shutdown ends it). Removing
/// it from the middle of a deque would cost a search, so the queue keeps the entry and remembers its ticket as gone
/// instead: ``count`` is always the number of requests really waiting, and gone entries are skipped when they reach
/// a lane's head or tail (and compacted away when they pile up). The common path (one client: enqueue, then leave
/// at the head) never hashes: the lane used last is found by comparing its client's bytes.
struct RequestQueue {
    private struct Entry {
        let request: RequestID
        let ticket: UInt64
        let arrival: UInt64
    }

    /// One client's requests, oldest first (a re-dispatched job before them).
    private struct Lane {
        let client: [UInt8]
        var entries: Deque<Entry> = []
        /// Entries whose request is still waiting.
        var live = 0
        /// The lane's current place in ``RequestQueue/turns``: a turn with another stamp is stale.
        var stamp: UInt64 = 0
    }

    /// Lanes by slot; nil for a free slot. A lane exists exactly while it holds a waiting request.
    private var lanes: [Lane?] = []
    private var freeSlots: [Int] = []
    private var slotOfClient: [[UInt8]: Int] = [:]
    /// The lane used last (the common path compares its client instead of hashing).
    private var lastSlot = -1
    /// Whose turn it is: lanes by slot and stamp, the next first. Stale turns (a lane gone, or moved to the front)
    /// are skipped.
    private var turns: Deque<(slot: Int, stamp: UInt64)> = []
    private var nextStamp: UInt64 = 1
    /// Tickets of entries still in a lane whose request left the queue.
    private var gone: Set<UInt64> = []

    /// Requests waiting (entries whose request left the queue do not count).
    private(set) var count = 0
    var isEmpty: Bool { count == 0 }
    /// Clients with a waiting request.
    var clientCount: Int { slotOfClient.count }

    /// Adds a request at the back of its client's lane (or at the front, and its lane takes the next turn), with a
    /// ticket unique to this stay in the queue.
    mutating func enqueue(
        _ request: RequestID, client: [UInt8], ticket: UInt64, arrival: UInt64, atFront: Bool = false
    ) {
        let entry = Entry(request: request, ticket: ticket, arrival: arrival)
        let slot: Int
        if let existing = self.slot(of: client) {
            slot = existing
        } else {
            slot = openLane(client)
            if !atFront { turns.append((slot, lanes[slot]!.stamp)) }
        }
        if atFront {
            lanes[slot]!.entries.prepend(entry)
            let stamp = nextStamp
            nextStamp &+= 1
            lanes[slot]!.stamp = stamp
            turns.prepend((slot, stamp))
        } else {
            lanes[slot]!.entries.append(entry)
        }
        lanes[slot]!.live += 1
        count += 1
        lastSlot = slot
    }

    /// Removes a waiting request that leaves the queue other than at the head. The caller knows it is waiting here
    /// with this ticket for this client (the request's state says so); returns false for a ticket already gone.
    @discardableResult
    mutating func remove(ticket: UInt64, client: [UInt8]) -> Bool {
        guard let slot = slot(of: client), gone.insert(ticket).inserted else { return false }
        count -= 1
        lanes[slot]!.live -= 1
        if lanes[slot]!.live == 0 {
            for entry in lanes[slot]!.entries { gone.remove(entry.ticket) }
            closeLane(slot)
        } else {
            trimTail(slot)
            let lane = lanes[slot]!
            if lane.entries.count > 64 && lane.live * 2 < lane.entries.count {
                let gone = self.gone
                lanes[slot]!.entries = Deque(lane.entries.filter { !gone.contains($0.ticket) })
                for entry in lane.entries where gone.contains(entry.ticket) { self.gone.remove(entry.ticket) }
            }
        }
        return true
    }

    /// The arrival time of the request that ``popFirst()`` would take (the oldest of the lane whose turn it is).
    mutating func headArrival() -> UInt64? {
        guard let slot = currentSlot() else { return nil }
        return lanes[slot]!.entries.first?.arrival
    }

    /// The request ``popFirst()`` would take, left in place.
    mutating func peekFirst() -> RequestID? {
        guard let slot = currentSlot() else { return nil }
        return lanes[slot]!.entries.first?.request
    }

    /// Takes the request at the head of the lane whose turn it is; that lane's next turn comes after the others'.
    mutating func popFirst() -> (request: RequestID, ticket: UInt64)? {
        guard let slot = currentSlot() else { return nil }
        let turn = turns.removeFirst()
        let entry = lanes[slot]!.entries.removeFirst()
        lanes[slot]!.live -= 1
        count -= 1
        if lanes[slot]!.live == 0 {
            for entry in lanes[slot]!.entries { gone.remove(entry.ticket) }
            closeLane(slot)
        } else {
            turns.append(turn)
        }
        return (entry.request, entry.ticket)
    }

    /// How many requests `client` has waiting.
    mutating func count(of client: [UInt8]) -> Int {
        guard let slot = slot(of: client) else { return 0 }
        return lanes[slot]!.live
    }

    /// The client with the most waiting requests, their number and its newest waiting request (what a fair queue
    /// sheds first when it is full). Costs a pass over the clients: only for a queue at a bound.
    mutating func heaviest() -> (client: [UInt8], count: Int, newest: RequestID)? {
        var best = -1
        var bestLive = 0
        for (slot, lane) in lanes.enumerated() {
            if let lane, lane.live > bestLive {
                best = slot
                bestLive = lane.live
            }
        }
        guard best >= 0, let newest = lanes[best]!.entries.last else { return nil }  // the tail is never gone
        return (lanes[best]!.client, bestLive, newest.request)
    }

    /// How many requests would be taken before a new request of `client` (and it itself) under round robin: each
    /// client's waiting requests count up to the new one's place in its own lane. A pass over the clients, unless
    /// the only lane is the client's own (then it is plain order). A new client's request waits for at most one
    /// request of each other lane, however many they hold.
    mutating func fairPosition(of client: [UInt8]) -> Int {
        if slotOfClient.isEmpty || (slotOfClient.count == 1 && slotOfClient[client] != nil) { return count + 1 }
        let place = count(of: client) + 1
        var ahead = 1
        for case let lane? in lanes { ahead += min(lane.live, place) }
        return ahead
    }

    /// Every waiting request, lane by lane, each head first.
    var waiting: [RequestID] {
        lanes.compactMap { $0 }.flatMap { lane in lane.entries.filter { !gone.contains($0.ticket) }.map(\.request) }
    }

    /// Entries kept, waiting or gone (for invariant checks: never fewer than ``count``).
    var storedEntries: Int { lanes.reduce(0) { $0 + ($1?.entries.count ?? 0) } }

    /// Broken invariants of the lanes (for the core's invariant checks).
    func consistencyProblems() -> [String] {
        var problems: [String] = []
        var live = 0
        for (slot, lane) in lanes.enumerated() {
            guard let lane else { continue }
            live += lane.live
            let waiting = lane.entries.filter { !gone.contains($0.ticket) }.count
            if waiting != lane.live { problems.append("a lane counts \(lane.live) waiting, holds \(waiting)") }
            if lane.live == 0 { problems.append("an empty lane is kept") }
            if slotOfClient[lane.client] != slot { problems.append("a lane is not indexed by its client") }
            if let last = lane.entries.last, gone.contains(last.ticket) { problems.append("a lane's tail is gone") }
            if !turns.contains(where: { $0.slot == slot && $0.stamp == lane.stamp }) {
                problems.append("a lane has no turn")
            }
        }
        if live != count { problems.append("lanes hold \(live) waiting, count \(count)") }
        if slotOfClient.count != lanes.count - freeSlots.count { problems.append("lane index out of step") }
        let stored = lanes.reduce(0) { $0 + ($1?.entries.count ?? 0) }
        if stored - live != gone.count { problems.append("\(gone.count) gone tickets, \(stored - live) gone entries") }
        return problems
    }

    // MARK: Lanes

    private mutating func slot(of client: [UInt8]) -> Int? {
        if lastSlot >= 0, let lane = lanes[lastSlot], lane.client == client { return lastSlot }
        guard let slot = slotOfClient[client] else { return nil }
        lastSlot = slot
        return slot
    }

    private mutating func openLane(_ client: [UInt8]) -> Int {
        let stamp = nextStamp
        nextStamp &+= 1
        var lane = Lane(client: client)
        lane.stamp = stamp
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            lanes[slot] = lane
        } else {
            slot = lanes.count
            lanes.append(lane)
        }
        slotOfClient[client] = slot
        return slot
    }

    private mutating func closeLane(_ slot: Int) {
        guard let lane = lanes[slot] else { return }
        slotOfClient.removeValue(forKey: lane.client)
        lanes[slot] = nil
        freeSlots.append(slot)
        if lastSlot == slot { lastSlot = -1 }
        // Stale turns pile up only as lanes come and go; drop them when they outnumber the live ones.
        if turns.count > 2 * slotOfClient.count + 64 {
            turns = Deque(turns.filter { lanes[$0.slot]?.stamp == $0.stamp })
        }
    }

    /// The slot whose turn it is, stale turns and gone heads skipped.
    private mutating func currentSlot() -> Int? {
        while let turn = turns.first {
            guard let lane = lanes[turn.slot], lane.stamp == turn.stamp else {
                turns.removeFirst()
                continue
            }
            if !gone.isEmpty {
                while let first = lanes[turn.slot]!.entries.first, gone.remove(first.ticket) != nil {
                    lanes[turn.slot]!.entries.removeFirst()
                }
            }
            return turn.slot
        }
        return nil
    }

    /// Drops gone entries at the lane's tail (so that its last entry is its newest waiting request).
    private mutating func trimTail(_ slot: Int) {
        while let last = lanes[slot]!.entries.last, gone.contains(last.ticket) {
            gone.remove(last.ticket)
            lanes[slot]!.entries.removeLast()
        }
    }
}
