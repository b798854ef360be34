import Testing

@testable import IntentBroker

/// The broker's timer queue fires timers in (time, order set) order, whatever mix of lanes and heap holds them.
@Suite struct TimerQueueTests {
    /// A timer set `after` nanoseconds from `now`, with the next sequence number.
    static func timer(_ now: UInt64, after: UInt64, sequence: inout UInt64) -> BrokerTimer {
        defer { sequence += 1 }
        return BrokerTimer(time: now + after, sequence: sequence, kind: .deadline, request: RequestID(sequence))
    }

    /// Random runs: time moves on, timers are set with one of `durations` (or, now and then, any duration), and the due
    /// ones are popped. Every pop must be the earliest pending timer of a plain sorted model, and so must `min`.
    static func check(seed: UInt64, durations: [UInt64]) {
        var generator = SplitMix(seed: seed)
        var queue = TimerQueue()
        var model: [BrokerTimer] = []
        var now: UInt64 = 1_000
        var sequence: UInt64 = 0
        for _ in 0..<2_000 {
            now += generator.next() % 5
            for _ in 0..<Int(generator.next() % 4) {
                let after =
                    generator.next() % 10 == 0
                    ? generator.next() % 400 : durations[Int(generator.next() % UInt64(durations.count))]
                let new = timer(now, after: after, sequence: &sequence)
                queue.insert(new)
                model.append(new)
            }
            model.sort()
            #expect(queue.min == model.first)
            #expect(queue.count == model.count)
            while let first = model.first, first.time <= now {
                let popped = queue.popMin(dueBy: now)
                #expect(popped == first, "seed \(seed): popped \(String(describing: popped)), expected \(first)")
                guard popped == first else { return }
                model.removeFirst()
            }
            #expect(queue.popMin(dueBy: now) == nil, "seed \(seed): a timer not yet due was popped")
        }
        while let first = model.first {
            #expect(queue.popMin() == first)
            model.removeFirst()
        }
        #expect(queue.popMin() == nil && queue.min == nil && queue.count == 0)
    }

    @Test(arguments: 0..<20) func firesInTimeOrderWithAFewDurations(seed: Int) {
        Self.check(seed: UInt64(seed), durations: [300, 120, 300, 300])
    }

    @Test(arguments: 0..<20) func firesInTimeOrderWithMoreDurationsThanLanes(seed: Int) {
        Self.check(seed: UInt64(seed) &+ 1_000, durations: [10, 50, 90, 130, 170, 210, 250, 290])
    }

    @Test func timersDueTogetherFireInTheOrderTheyWereSetInLanesAndHeapAlike() {
        var queue = TimerQueue()
        var sequence: UInt64 = 0
        // 50 and 400 make a lane, 300, 200 and 100 three more; the second 100 and the 150 join the last lane; the 90
        // and the last 100 fit no lane's end with four lanes taken, so they wait in the heap, and that 100 ties with
        // the lane's two earlier ones.
        for time in [50, 400, 300, 200, 100, 100, 90, 150, 100] as [UInt64] {
            queue.insert(Self.timer(time, after: 0, sequence: &sequence))
        }
        let fired = (0..<9).compactMap { _ in queue.popMin() }.map { "\($0.time)/\($0.sequence)" }
        #expect(fired == ["50/0", "90/6", "100/4", "100/5", "100/8", "150/7", "200/3", "300/2", "400/1"])
    }

    @Test func aPendingTimerIsListedWhereverItIsKept() {
        var queue = TimerQueue()
        var sequence: UInt64 = 0
        // Six durations, set newest-first: more lanes than allowed, so some land in the heap.
        for after in [600, 500, 400, 300, 200, 100] as [UInt64] {
            queue.insert(Self.timer(0, after: after, sequence: &sequence))
        }
        #expect(Set(queue.unordered.map(\.sequence)) == Set(0..<6))
        #expect(queue.count == 6)
    }
}
