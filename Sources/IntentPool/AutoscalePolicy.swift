public import IntentWire

/// Limits and pace of a pool that scales itself (`concierge pool --autoscale MIN:MAX`).
public struct AutoscaleConfiguration: Sendable, Equatable {
    /// The pool never shrinks below ``minimum`` workers (at least 1: the pool learns which intent types it serves
    /// from its workers' registrations) nor grows above ``maximum``.
    public var minimum: Int
    public var maximum: Int
    /// How long at least one worker's capacity must stay free, with nothing queued, before the pool shrinks.
    public var idleTime: Duration
    /// The least time between two steps (grow or shrink), so the broker's answers show the last step's effect.
    public var stepInterval: Duration
    /// Polls in a row that must see requests queued before the pool grows.
    public var queuedPolls: Int
    /// The pool also grows at once when the oldest queued request has waited longer than the broker's default
    /// deadline divided by this (5: a fifth of the deadline).
    public var waitDivisor: Int
    /// A worker just started may take this long to register before the pool grows again anyway.
    public var startupAllowance: Duration

    public init(
        minimum: Int, maximum: Int, idleTime: Duration = .seconds(30), stepInterval: Duration = .seconds(2),
        queuedPolls: Int = 2, waitDivisor: Int = 5, startupAllowance: Duration = .seconds(10)
    ) {
        self.minimum = minimum
        self.maximum = maximum
        self.idleTime = idleTime
        self.stepInterval = stepInterval
        self.queuedPolls = queuedPolls
        self.waitDivisor = waitDivisor
        self.startupAllowance = startupAllowance
    }
}

/// The autoscaling rules as a state machine without I/O: each poll of the broker's `STATS` goes in, with the slots the
/// pool keeps and the time; a decision comes out (compare SwiftNIO's state machines). ``PoolAutoscaler`` performs it.
///
/// - **Grow** by one when the intent types the pool's workers serve had requests queued in ``AutoscaleConfiguration/
///   queuedPolls`` polls in a row, or their oldest request has waited longer than a fifth of the broker's default
///   deadline; at most one step per ``AutoscaleConfiguration/stepInterval``, not above the maximum, and not while a
///   worker started by the last step has not registered yet (within ``AutoscaleConfiguration/startupAllowance``):
///   it is about to take the queue, and growing again would overshoot.
/// - **Shrink** by one when, with nothing queued for the pool's types, at least one worker's capacity has been free
///   for ``AutoscaleConfiguration/idleTime`` (hysteresis: a short lull does not shrink, and a pool that has just
///   grown is under pressure, so it does not shrink back at once); at most one step per step interval, not below the
///   minimum. The worker stopped is an *idle* one (no job in the broker's answer), the highest slot among them; with
///   no idle worker the pool waits. It is never a worker with jobs.
/// - **Hold** otherwise, with the reason. No answer from the broker (or a broker `unavailable` or `stopping`) holds
///   and restarts both counts: the pool never shrinks on missing information.
public struct AutoscalePolicy: Sendable {
    public enum Decision: Sendable, Equatable {
        /// Keep the size; why.
        case hold(String)
        /// Start one more worker; why.
        case grow(String)
        /// Stop this slot's worker (idle); why.
        case shrink(slot: Int, String)

        public var reason: String {
            switch self {
            case .hold(let reason), .grow(let reason), .shrink(_, let reason): reason
            }
        }
    }

    public let configuration: AutoscaleConfiguration
    /// Polls in a row that saw requests queued for the pool's types.
    public private(set) var queuedPolls = 0
    /// Since when at least one worker's capacity has been free with nothing queued (monotonic ns).
    public private(set) var idleSince: UInt64?
    /// When the pool last grew or shrank (monotonic ns).
    public private(set) var lastStep: UInt64?

    public init(configuration: AutoscaleConfiguration) {
        self.configuration = configuration
    }

    /// The decision for one poll.
    /// - Parameters:
    ///   - stats: The broker's answer, nil when it did not answer in time.
    ///   - slots: The slots the pool keeps now, with their workers' names.
    ///   - now: Monotonic nanoseconds.
    public mutating func decide(stats: BrokerStats?, slots: [Int: String], now: UInt64) -> Decision {
        guard let stats else {
            reset()
            return .hold("no answer from the broker")
        }
        guard stats.state != "unavailable", stats.state != "stopping" else {
            reset()
            return .hold("the broker is \(stats.state)")
        }
        let size = slots.count
        let slotOfName = Dictionary(slots.map { ($0.value, $0.key) }, uniquingKeysWith: max)
        // The pool's workers as the broker sees them: registered, and their slot still wanted.
        let mine = stats.workers.filter { slotOfName[$0.name] != nil && !$0.draining }
        let served = Set(mine.flatMap(\.intents))
        let types = stats.intentTypes.filter { served.contains($0.name) }
        let queued = types.reduce(0) { $0 + $1.queued }
        let oldest = types.map(\.oldestAgeMilliseconds).max() ?? 0
        let waitLimit = stats.defaultDeadlineMilliseconds / max(1, configuration.waitDivisor)
        queuedPolls = queued > 0 ? queuedPolls + 1 : 0
        let sinceStep = lastStep.map { now > $0 ? now - $0 : 0 } ?? UInt64.max
        let stepAllowed = sinceStep >= configuration.stepInterval.nanoseconds

        if size < configuration.minimum {
            guard stepAllowed else { return .hold("below the minimum of \(configuration.minimum); next step soon") }
            return step(.grow("below the minimum of \(configuration.minimum) workers"), now: now)
        }

        let waitedTooLong = queued > 0 && oldest > waitLimit
        if queuedPolls >= configuration.queuedPolls || waitedTooLong {
            idleSince = nil
            let why =
                waitedTooLong
                ? "the oldest request has waited \(oldest) ms, over \(waitLimit) ms (the default deadline / "
                    + "\(configuration.waitDivisor)), \(queued) queued"
                : "\(queued) requests queued for \(queuedPolls) polls in a row"
            guard size < configuration.maximum else {
                return .hold("\(why); at the maximum of \(configuration.maximum) workers")
            }
            guard stepAllowed else { return .hold("\(why); the last step was \(sinceStep / 1_000_000) ms ago") }
            if mine.count < size, sinceStep < configuration.startupAllowance.nanoseconds {
                return .hold("\(why); \(size - mine.count) started worker(s) not registered yet")
            }
            return step(.grow(why), now: now)
        }

        let free = mine.reduce(0) { $0 + max(0, $1.capacity - $1.jobs) }
        let workerCapacity = mine.map(\.capacity).min() ?? Int.max
        guard queued == 0, free >= workerCapacity else {
            idleSince = nil
            return .hold(queued > 0 ? "\(queued) requests queued" : "busy: \(free) of the workers' capacity free")
        }
        let idleFrom = idleSince ?? now
        idleSince = idleFrom
        let idle = now - idleFrom
        guard size > configuration.minimum else {
            return .hold("idle, at the minimum of \(configuration.minimum) workers")
        }
        guard idle >= configuration.idleTime.nanoseconds else {
            return .hold("\(free) capacity free for \(idle / 1_000_000) ms; shrinking after \(configuration.idleTime)")
        }
        guard stepAllowed else { return .hold("idle; the last step was \(sinceStep / 1_000_000) ms ago") }
        // The highest slot among the idle workers: never one with a job.
        guard let victim = mine.filter({ $0.jobs == 0 }).compactMap({ slotOfName[$0.name] }).max() else {
            return .hold("\(free) capacity free for \(idle / 1_000_000) ms, but no worker is idle")
        }
        return step(
            .shrink(
                slot: victim,
                "\(free) capacity free and nothing queued for \(idle / 1_000_000) ms; \(slots[victim] ?? "") is idle"),
            now: now)
    }

    private mutating func step(_ decision: Decision, now: UInt64) -> Decision {
        lastStep = now
        queuedPolls = 0
        return decision
    }

    private mutating func reset() {
        queuedPolls = 0
        idleSince = nil
    }
}
