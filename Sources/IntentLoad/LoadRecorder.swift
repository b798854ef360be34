public import Histogram
import IntentWire

/// Counts and latency distributions of one load run, updated on the load thread as replies arrive.
///
/// Only *measured* requests (offered after the warm-up) are recorded. Latencies are in microseconds; the first
/// reply is the progress reply if one came, else the final one.
public struct LoadRecorder: Sendable {
    public private(set) var firstReply = Histogram<UInt64>.latency()
    public private(set) var finalReply = Histogram<UInt64>.latency()
    public private(set) var outcomes: [String: Int] = [:]
    public private(set) var requests = 0
    /// Final replies that did what was asked (throughput); handlers' failures are ``failureReplies``.
    public private(set) var finalReplies = 0
    /// Final replies whose code is a handler's failure (``LoadOutcome/isFailure(_:)``): answered, but not counted
    /// as throughput.
    public private(set) var failureReplies = 0
    public private(set) var errorReplies = 0
    public private(set) var progressReplies = 0
    public private(set) var deadlineMisses = 0
    public private(set) var unanswered = 0
    /// Measured requests the client's throttle refused (counted in ``requests`` too: they were offered).
    public private(set) var throttled = 0
    /// One point per interval after the warm-up.
    public private(set) var timeline: [LoadTimelinePoint] = []
    /// The same counts per workload item (by its index), for a mix's per-label breakdown.
    public private(set) var items: [LoadItemRecord]

    private let origin: UInt64
    private let intervalNanos: UInt64
    private var intervalFinal = Histogram<UInt64>.latency()
    private var current = LoadTimelinePoint(second: 0)

    /// `origin`: the end of the warm-up (monotonic ns); `interval`: the timeline's resolution; `items`: how many
    /// workload items to count apart (each has a final-reply histogram of its own when there are several).
    public init(origin: UInt64, interval: Duration = .seconds(1), items: Int = 1) {
        self.origin = origin
        intervalNanos = max(1, interval.nanoseconds)
        self.items = (0..<max(1, items)).map { _ in LoadItemRecord(histogram: items > 1) }
    }

    /// A measured request of workload item `item` was sent (and so offered).
    public mutating func recordSent(now: UInt64, item: Int = 0) {
        requests += 1
        items[item].requests += 1
        advance(to: now)
        current.sent += 1
    }

    /// A measured request was offered and the client's throttle refused it: it ends at once, unsent, with outcome
    /// ``LoadOutcome/throttled`` (no latency is recorded: no reply came).
    public mutating func recordThrottled(now: UInt64, item: Int = 0) {
        requests += 1
        items[item].requests += 1
        items[item].throttled += 1
        throttled += 1
        outcomes[LoadOutcome.throttled, default: 0] += 1
        advance(to: now)
        current.sent += 1
        current.completed += 1
    }

    /// The first reply of a measured request arrived `latency` ns after its intended send time;
    /// `missedDeadline` if it came later than its deadline after the actual send.
    public mutating func recordFirstReply(latency: UInt64, missedDeadline: Bool) {
        firstReply.recordNanoseconds(latency)
        if missedDeadline {
            deadlineMisses += 1
            current.deadlineMisses += 1
        }
    }

    /// A progress reply (counted as an outcome of its own; the request goes on).
    public mutating func recordProgress() {
        progressReplies += 1
        outcomes[LoadOutcome.progress, default: 0] += 1
    }

    /// The final or error reply of a measured request (of workload item `item`) arrived at `now`, `latency` ns after
    /// its intended send. A final reply whose code is a handler's failure counts in ``failureReplies``, not in
    /// ``finalReplies``.
    public mutating func recordFinalReply(
        latency: UInt64, outcome: String, isError: Bool, now: UInt64, item: Int = 0
    ) {
        finalReply.recordNanoseconds(latency)
        outcomes[outcome, default: 0] += 1
        advance(to: now)
        current.completed += 1
        items[item].finalReply?.recordNanoseconds(latency)
        if isError {
            errorReplies += 1
            items[item].errorReplies += 1
            current.errors += 1
        } else if LoadOutcome.isFailure(outcome) {
            failureReplies += 1
            items[item].failureReplies += 1
            current.failures += 1
        } else {
            finalReplies += 1
            items[item].finalReplies += 1
        }
        intervalFinal.recordNanoseconds(latency)
    }

    /// A measured request ended on the client's side: after a reconnect the broker no longer knew it (a restarted
    /// broker). Counted as an error ending (``LoadOutcome/brokerRestarted``) but not as a latency: no reply came.
    public mutating func recordBrokerRestarted(now: UInt64, item: Int = 0) {
        outcomes[LoadOutcome.brokerRestarted, default: 0] += 1
        items[item].errorReplies += 1
        advance(to: now)
        current.completed += 1
        errorReplies += 1
        current.errors += 1
    }

    /// Requests that never got a final reply.
    public mutating func recordUnanswered(_ count: Int, item: Int = 0) {
        guard count > 0 else { return }
        unanswered += count
        items[item].unanswered += count
        outcomes[LoadOutcome.unanswered, default: 0] += count
    }

    /// Closes the last timeline interval.
    public mutating func finish(now: UInt64) {
        advance(to: now)
        if current.sent > 0 || current.completed > 0 { closeInterval() }
    }

    private mutating func advance(to now: UInt64) {
        guard now >= origin else { return }
        let second = Int((now - origin) / intervalNanos)
        while current.second < second {
            closeInterval()
            current = LoadTimelinePoint(second: current.second + 1)
        }
    }

    private mutating func closeInterval() {
        current.finalP99Microseconds = intervalFinal.totalCount > 0 ? intervalFinal.valueAtPercentile(99) : 0
        current.finalP50Microseconds = intervalFinal.totalCount > 0 ? intervalFinal.valueAtPercentile(50) : 0
        timeline.append(current)
        intervalFinal.reset()
    }
}

/// What happened in one interval (one second by default) of a load run.
public struct LoadTimelinePoint: Sendable, Equatable {
    /// Intervals since the end of the warm-up.
    public var second: Int
    public var sent = 0
    /// Final and error replies.
    public var completed = 0
    public var errors = 0
    /// Final replies whose code is a handler's failure (in ``completed`` too).
    public var failures = 0
    public var deadlineMisses = 0
    public var finalP50Microseconds: UInt64 = 0
    public var finalP99Microseconds: UInt64 = 0

    public init(second: Int) { self.second = second }
}

/// The counts of one workload item (one label of a mix) in a load run.
public struct LoadItemRecord: Sendable {
    /// Measured requests offered.
    public var requests = 0
    public var finalReplies = 0
    public var failureReplies = 0
    /// Error replies, and requests a restarted broker no longer knew.
    public var errorReplies = 0
    public var unanswered = 0
    public var throttled = 0
    /// Time to the final or error reply (µs); nil when the run has one item (the run's own histogram is its).
    public var finalReply: Histogram<UInt64>?

    init(histogram: Bool) {
        finalReply = histogram ? Histogram<UInt64>.latency() : nil
    }
}
