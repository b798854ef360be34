import DequeModule
import HeapModule

/// The broker's pending timers, soonest first.
///
/// Timers are never cancelled (see ``BrokerTimer``), so at a high request rate hundreds of thousands are pending: one
/// deadline timer per request, kept for as long as its deadline. Most are set in the order they fall due: requests
/// arrive in time order, and most share a few durations (the default deadline, the hard limit). So each run of
/// timers set in time order is a FIFO lane, where a timer costs O(1) to set and to fire. A heap of all of them cost a
/// logarithmic sift per timer fired: about 1.6% of the broker's CPU on the echo bench, at some 260,000 timers.
///
/// A new timer joins the lane whose last timer is the latest one not after it. When it fits no lane's end, it starts
/// a new lane while there are fewer than ``maxLanes``, and otherwise goes to a heap. The earliest of the lanes' heads
/// and the heap's minimum fires first; timers due at the same time fire in the order they were set (their sequence).
struct TimerQueue {
    /// Lanes at most; timers of more distinct durations than this go to the heap.
    static let maxLanes = 4

    /// Runs of timers in firing order, none empty.
    private var lanes: [Deque<BrokerTimer>] = []
    private var heap = Heap<BrokerTimer>()

    /// The timer that fires next.
    var min: BrokerTimer? { soonest().timer }

    /// How many timers are pending.
    var count: Int { lanes.reduce(heap.count) { $0 + $1.count } }

    /// Every pending timer, in no particular order (for the invariants).
    var unordered: [BrokerTimer] { lanes.flatMap { Array($0) } + heap.unordered }

    mutating func insert(_ timer: BrokerTimer) {
        var best: Int?
        for index in lanes.indices {
            guard let last = lanes[index].last, !(timer < last) else { continue }
            if let chosen = best, let chosenLast = lanes[chosen].last, !(chosenLast < last) { continue }
            best = index
        }
        if let best {
            lanes[best].append(timer)
        } else if lanes.count < Self.maxLanes {
            lanes.append([timer])
        } else {
            heap.insert(timer)
        }
    }

    /// Removes and returns the timer that fires next, if it is due by `now` (one look at the heads for both).
    mutating func popMin(dueBy now: UInt64 = .max) -> BrokerTimer? {
        let (lane, timer) = soonest()
        guard let timer, timer.time <= now else { return nil }
        guard let lane else { return heap.popMin() }
        lanes[lane].removeFirst()
        if lanes[lane].isEmpty { lanes.remove(at: lane) }
        return timer
    }

    /// The earliest of the lanes' heads and the heap's minimum, and its lane (nil: the heap's).
    private func soonest() -> (lane: Int?, timer: BrokerTimer?) {
        var lane: Int?
        var soonest = heap.min
        for index in lanes.indices {
            if let first = lanes[index].first, soonest.map({ first < $0 }) ?? true {
                soonest = first
                lane = index
            }
        }
        return (lane, soonest)
    }
}
