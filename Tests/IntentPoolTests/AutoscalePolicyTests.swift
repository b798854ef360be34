import IntentPool
import IntentWire
import Testing

/// The autoscaling rules (``AutoscalePolicy``) without processes or sockets: a poll goes in, a decision comes out.
@Suite struct AutoscalePolicyTests {
    static let second: UInt64 = 1_000_000_000
    let configuration = AutoscaleConfiguration(minimum: 1, maximum: 4, idleTime: .seconds(30))

    /// `workers` as (slot, jobs) of capacity 4 serving Echo; `queued` Echo requests, the oldest `oldestMs` old.
    func stats(
        _ workers: [(slot: Int, jobs: Int)], queued: Int = 0, oldestMs: Int = 0, state: String = "active",
        others: [BrokerStats.Worker] = []
    ) -> BrokerStats {
        let mine = workers.map {
            BrokerStats.Worker(name: "pool-\($0.slot)", capacity: 4, jobs: $0.jobs, intents: ["Echo"])
        }
        let all = mine + others
        return BrokerStats(
            state: state, defaultDeadlineMilliseconds: 3000, requestsInFlight: 0, queued: queued,
            intentTypes: [
                .init(
                    name: "Echo", queued: queued, oldestAgeMilliseconds: oldestMs, workers: all.count,
                    capacity: all.count * 4, capacityUsed: all.reduce(0) { $0 + $1.jobs },
                    capacityFree: all.reduce(0) { $0 + max(0, $1.capacity - $1.jobs) })
            ],
            workers: all)
    }

    func slots(_ slots: Int...) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: slots.map { ($0, "pool-\($0)") })
    }

    func isGrow(_ decision: AutoscalePolicy.Decision) -> Bool {
        if case .grow = decision { return true }
        return false
    }

    func isHold(_ decision: AutoscalePolicy.Decision) -> Bool {
        if case .hold = decision { return true }
        return false
    }

    @Test func growsAfterRequestsQueuedTwoPollsInARow() {
        var policy = AutoscalePolicy(configuration: configuration)
        let busy = stats([(0, 4)], queued: 3, oldestMs: 100)
        #expect(isHold(policy.decide(stats: busy, slots: slots(0), now: 1 * Self.second)))
        let decision = policy.decide(stats: busy, slots: slots(0), now: 2 * Self.second)
        #expect(isGrow(decision), "\(decision)")
        #expect(decision.reason.contains("queued for 2 polls"))
    }

    @Test func aQueueThatEmptiesBetweenPollsDoesNotGrow() {
        var policy = AutoscalePolicy(configuration: configuration)
        #expect(isHold(policy.decide(stats: stats([(0, 4)], queued: 1), slots: slots(0), now: 1 * Self.second)))
        #expect(isHold(policy.decide(stats: stats([(0, 4)]), slots: slots(0), now: 2 * Self.second)))
        #expect(isHold(policy.decide(stats: stats([(0, 4)], queued: 1), slots: slots(0), now: 3 * Self.second)))
    }

    @Test func growsAtOnceWhenTheOldestWaitsOverAFifthOfTheDeadline() {
        var policy = AutoscalePolicy(configuration: configuration)
        // 3000 ms / 5 = 600 ms.
        #expect(
            isHold(policy.decide(stats: stats([(0, 4)], queued: 1, oldestMs: 600), slots: slots(0), now: Self.second)))
        var other = AutoscalePolicy(configuration: configuration)
        let decision = other.decide(stats: stats([(0, 4)], queued: 1, oldestMs: 601), slots: slots(0), now: Self.second)
        #expect(isGrow(decision), "\(decision)")
    }

    @Test func atMostOneStepPerIntervalAndNotWhileAStartedWorkerIsUnregistered() {
        var policy = AutoscalePolicy(configuration: configuration)
        let late = stats([(0, 4)], queued: 9, oldestMs: 2000)
        #expect(isGrow(policy.decide(stats: late, slots: slots(0), now: 10 * Self.second)))
        // Pool-1 started but has not registered: 1 s later the step interval holds, 3 s later the new worker does.
        #expect(isHold(policy.decide(stats: late, slots: slots(0, 1), now: 11 * Self.second)))
        let waiting = policy.decide(stats: late, slots: slots(0, 1), now: 13 * Self.second)
        #expect(isHold(waiting) && waiting.reason.contains("not registered"), "\(waiting)")
        // Registered: grows again.
        let both = stats([(0, 4), (1, 4)], queued: 9, oldestMs: 2000)
        #expect(isGrow(policy.decide(stats: both, slots: slots(0, 1), now: 14 * Self.second)))
        // A worker that never registers does not block growth for ever (the startup allowance, 10 s).
        #expect(isGrow(policy.decide(stats: both, slots: slots(0, 1, 2), now: 25 * Self.second)))
    }

    @Test func neverAboveTheMaximum() {
        var policy = AutoscalePolicy(configuration: configuration)
        let full = stats([(0, 4), (1, 4), (2, 4), (3, 4)], queued: 50, oldestMs: 2500)
        let decision = policy.decide(stats: full, slots: slots(0, 1, 2, 3), now: Self.second)
        #expect(isHold(decision) && decision.reason.contains("maximum"), "\(decision)")
    }

    @Test func queuesOfTypesItsWorkersDoNotServeDoNotGrowThePool() {
        var policy = AutoscalePolicy(configuration: configuration)
        var other = stats([(0, 0)])
        other.intentTypes.append(.init(name: "SendPayment", queued: 20, oldestAgeMilliseconds: 2900))
        #expect(isHold(policy.decide(stats: other, slots: slots(0), now: 1 * Self.second)))
        #expect(isHold(policy.decide(stats: other, slots: slots(0), now: 5 * Self.second)))
    }

    @Test func shrinksAnIdleWorkerOnlyAfterTheIdleTime() {
        var policy = AutoscalePolicy(configuration: configuration)
        let quiet = stats([(0, 1), (1, 0)])
        #expect(isHold(policy.decide(stats: quiet, slots: slots(0, 1), now: 100 * Self.second)))
        #expect(isHold(policy.decide(stats: quiet, slots: slots(0, 1), now: 129 * Self.second)))
        let decision = policy.decide(stats: quiet, slots: slots(0, 1), now: 130 * Self.second)
        #expect(decision == .shrink(slot: 1, decision.reason), "\(decision)")
    }

    @Test func aShortLullDoesNotShrink() {
        var policy = AutoscalePolicy(configuration: configuration)
        #expect(isHold(policy.decide(stats: stats([(0, 0), (1, 0)]), slots: slots(0, 1), now: 100 * Self.second)))
        // Busy again for one poll: the idle time starts over.
        #expect(isHold(policy.decide(stats: stats([(0, 4), (1, 4)]), slots: slots(0, 1), now: 120 * Self.second)))
        #expect(isHold(policy.decide(stats: stats([(0, 0), (1, 0)]), slots: slots(0, 1), now: 121 * Self.second)))
        #expect(isHold(policy.decide(stats: stats([(0, 0), (1, 0)]), slots: slots(0, 1), now: 150 * Self.second)))
        #expect(!isHold(policy.decide(stats: stats([(0, 0), (1, 0)]), slots: slots(0, 1), now: 151 * Self.second)))
    }

    @Test func neverStopsAWorkerWithAJob() {
        var policy = AutoscalePolicy(configuration: configuration)
        // Capacity is free (4 of 8), but each worker holds jobs: wait.
        let spread = stats([(0, 2), (1, 2)])
        #expect(isHold(policy.decide(stats: spread, slots: slots(0, 1), now: 100 * Self.second)))
        let decision = policy.decide(stats: spread, slots: slots(0, 1), now: 200 * Self.second)
        #expect(isHold(decision) && decision.reason.contains("no worker is idle"), "\(decision)")
        // The highest slot is busy, a lower one idle: the idle one goes.
        let lowIdle = stats([(0, 1), (1, 0), (2, 3)])
        #expect(policy.decide(stats: lowIdle, slots: slots(0, 1, 2), now: 201 * Self.second).isShrink(slot: 1))
    }

    @Test func drainingAndForeignWorkersAreNotThePools() {
        var policy = AutoscalePolicy(configuration: configuration)
        var quiet = stats(
            [(0, 3)], others: [.init(name: "elsewhere-1", capacity: 4, jobs: 0, intents: ["Echo"])])
        quiet.workers.append(.init(name: "pool-1", capacity: 4, jobs: 0, draining: true, intents: ["Echo"]))
        // Pool-1 is draining (being stopped): its capacity does not count; the foreign worker is not the pool's.
        #expect(isHold(policy.decide(stats: quiet, slots: slots(0, 1), now: 100 * Self.second)))
        #expect(isHold(policy.decide(stats: quiet, slots: slots(0, 1), now: 200 * Self.second)))
    }

    @Test func shrinksOneStepPerIntervalDownToTheMinimum() {
        var policy = AutoscalePolicy(configuration: configuration)
        var pool = [0, 1, 2, 3]
        var now = 100 * Self.second
        var steps: [UInt64] = []
        while now < 200 * Self.second {
            let slotNames = Dictionary(uniqueKeysWithValues: pool.map { ($0, "pool-\($0)") })
            let decision = policy.decide(stats: stats(pool.map { ($0, 0) }), slots: slotNames, now: now)
            if case .shrink(let slot, _) = decision {
                pool.removeAll { $0 == slot }
                steps.append((now - 100 * Self.second) / Self.second)
            }
            now += Self.second
        }
        #expect(pool == [0])
        #expect(steps == [30, 32, 34], "the idle time, then one step per 2 s")
    }

    @Test func noAnswerOrAnUnavailableBrokerHoldsAndStartsOver() {
        var policy = AutoscalePolicy(configuration: configuration)
        let busy = stats([(0, 4)], queued: 3)
        #expect(isHold(policy.decide(stats: busy, slots: slots(0), now: 1 * Self.second)))
        #expect(isHold(policy.decide(stats: nil, slots: slots(0), now: 2 * Self.second)))
        #expect(isHold(policy.decide(stats: busy, slots: slots(0), now: 3 * Self.second)), "the count started over")
        #expect(policy.queuedPolls == 1)
        let unavailable = stats([], state: "unavailable")
        let decision = policy.decide(stats: unavailable, slots: slots(0, 1), now: 200 * Self.second)
        #expect(isHold(decision) && decision.reason.contains("unavailable"))
        #expect(policy.idleSince == nil)
    }

    @Test func belowTheMinimumGrows() {
        var policy = AutoscalePolicy(configuration: AutoscaleConfiguration(minimum: 2, maximum: 4))
        #expect(isGrow(policy.decide(stats: stats([(0, 0)]), slots: slots(0), now: Self.second)))
    }
}

extension AutoscalePolicy.Decision {
    func isShrink(slot: Int) -> Bool {
        if case .shrink(let stopped, _) = self { return stopped == slot }
        return false
    }
}
