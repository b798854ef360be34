public import Histogram

/// The result of a load run: throughput, latency percentiles, outcome counts, deadline misses and a timeline.
public struct LoadSummary: Sendable {
    /// `closed` or `open`.
    public var mode: String
    /// Closed loop: requests in flight.
    public var concurrency: Int?
    /// Open loop: the target arrival rate (requests per second).
    public var targetRate: Double?
    public var connections: Int
    /// The measured window: from the end of the warm-up to the last reply (seconds).
    public var durationSeconds: Double
    public var warmupSeconds: Double
    /// The first-reply deadline sent with every request.
    public var deadlineMilliseconds: Int
    /// What was sent: one label per workload item with its phase.
    public var workload: [String]

    /// Measured requests offered: sent, or refused by the client's throttle (``throttled``).
    public var requests: Int
    /// Requests answered with a final reply that is not a handler's failure per second of the measured window.
    public var throughputRPS: Double
    /// Requests answered at all (final, failure or error) per second.
    public var answeredRPS: Double
    /// Measured requests offered per second (open loop: close to the target unless the client fell behind).
    public var offeredRPS: Double
    /// Final replies that did what was asked (a handler's failure is in ``failureReplies`` instead).
    public var finalReplies: Int
    /// Error replies, and requests ended on the client's side because a restarted broker no longer knew them
    /// (outcome `error.broker-restarted`).
    public var errorReplies: Int
    public var progressReplies: Int
    public var unanswered: Int
    /// Measured requests the client's own throttle refused without sending them (``LoadConfiguration/throttle``).
    public var throttled: Int = 0
    /// Final replies whose code is a handler's failure (``LoadOutcome/isFailure(_:)``): answered, not throughput.
    public var failureReplies: Int = 0
    /// Requests whose first reply came later than their deadline (counted from the actual send).
    public var deadlineMisses: Int
    /// Counts by outcome key (see ``LoadOutcome``).
    public var outcomes: [String: Int]
    /// Time to first reply (progress or final), from the intended send time.
    public var firstReply: LatencyPercentiles
    /// Time to the final or error reply, from the intended send time.
    public var finalReply: LatencyPercentiles
    /// Open loop: the most due requests that waited in the client because ``LoadConfiguration/maxInFlight``
    /// were in flight (0: the client always kept up).
    public var clientBacklogMax: Int
    /// Replies that matched no request in flight (should be 0).
    public var strayReplies: Int
    public var timeline: [LoadTimelinePoint]
    /// The full distributions (microseconds), for percentile-distribution files.
    public var firstReplyHistogram: Histogram<UInt64>
    public var finalReplyHistogram: Histogram<UInt64>
    /// Every request carried a fresh idempotency key (``LoadConfiguration/idempotencyKeys``).
    public var idempotencyKeys: Bool = false
    /// Per workload item (one row per label of a mix; one row for a single intent).
    public var labels: [LoadLabelSummary] = []

    /// Error replies plus unanswered requests.
    public var errors: Int { errorReplies + unanswered }
}

/// One workload item's share of a load run: what it offered and how it was answered.
public struct LoadLabelSummary: Sendable {
    /// The item's label (its intent type unless the mix names it).
    public var label: String
    public var phase: String
    public var weight: Int
    /// Measured requests offered.
    public var requests: Int
    public var finalReplies: Int
    public var failureReplies: Int
    public var errorReplies: Int
    public var unanswered: Int
    /// ``finalReplies`` per second of the run's measured window.
    public var throughputRPS: Double
    /// Time to the final or error reply.
    public var finalReply: LatencyPercentiles

    public init(
        label: String, phase: String, weight: Int, requests: Int, finalReplies: Int, failureReplies: Int,
        errorReplies: Int, unanswered: Int, throughputRPS: Double, finalReply: LatencyPercentiles
    ) {
        self.label = label
        self.phase = phase
        self.weight = weight
        self.requests = requests
        self.finalReplies = finalReplies
        self.failureReplies = failureReplies
        self.errorReplies = errorReplies
        self.unanswered = unanswered
        self.throughputRPS = throughputRPS
        self.finalReply = finalReply
    }

    /// From a recorder's counts for the item; `runHistogram` stands in for an item without a histogram of its own
    /// (a run of one item).
    init(
        label: String, phase: String, weight: Int, record: LoadItemRecord, runHistogram: Histogram<UInt64>,
        window: Double
    ) {
        self.init(
            label: label, phase: phase, weight: weight, requests: record.requests, finalReplies: record.finalReplies,
            failureReplies: record.failureReplies, errorReplies: record.errorReplies, unanswered: record.unanswered,
            throughputRPS: window > 0 ? Double(record.finalReplies) / window : 0,
            finalReply: LatencyPercentiles(record.finalReply ?? runHistogram))
    }
}
