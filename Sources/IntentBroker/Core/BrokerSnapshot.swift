/// What a broker holds at one moment, for operators: the queues and the oldest wait of every intent type, the
/// requests in flight, and every registered worker with its load (metrics gauges, `CIPW02 STATS` for a pool that
/// scales itself, `Docs/OPERATIONS.md`).
///
/// The loop makes one with ``BrokerCore/snapshot(now:)`` on its own thread; the value is then read anywhere.
public struct BrokerSnapshot: Sendable, Equatable {
    /// One intent type: its queue and the workers that serve it.
    public struct IntentType: Sendable, Equatable {
        /// The type's name (at most 64 bytes of it, as in logs).
        public var name: String
        /// Requests waiting for a worker of this type.
        public var queueDepth: Int
        /// How long the request at the head of the queue has waited, in nanoseconds (0 when none waits).
        public var oldestAgeNanoseconds: UInt64
        /// Registered workers that serve the type (draining ones included).
        public var workers: Int
        /// Their capacity in jobs, and the jobs they hold now (of any type).
        public var capacity: Int
        public var capacityUsed: Int
        /// Capacity that could start a job of this type now (workers not draining and not blocked).
        public var capacityFree: Int
    }

    /// One registered worker.
    public struct Worker: Sendable, Equatable {
        /// The name it announced in READY.
        public var name: String
        public var capacity: Int
        /// Jobs sent to it (or booked for it) and not answered yet.
        public var jobs: Int
        /// It sent DRAIN: no more jobs.
        public var draining: Bool
        /// Its send queue was full at the last dispatch.
        public var blocked: Bool
    }

    public var intentTypes: [IntentType] = []
    public var workers: [Worker] = []
    /// Accepted requests not yet ended (queued or running).
    public var requestsInFlight = 0
    /// Conversations that have not ended (PROTOCOL.md 4.11).
    public var conversationsOpen = 0
    /// Requests waiting in all queues together.
    public var queued = 0

    public init() {}

    /// Workers that take jobs (not draining, not blocked).
    public var readyWorkers: Int { workers.count { !$0.draining && !$0.blocked } }
    public var drainingWorkers: Int { workers.count(where: \.draining) }
    public var blockedWorkers: Int { workers.count { !$0.draining && $0.blocked } }
    /// Jobs held by all workers, and the capacity left on workers that take jobs.
    public var capacityUsed: Int { workers.reduce(0) { $0 + $1.jobs } }
    public var capacityFree: Int {
        workers.reduce(0) { $0 + (!$1.draining && !$1.blocked ? max(0, $1.capacity - $1.jobs) : 0) }
    }
}
