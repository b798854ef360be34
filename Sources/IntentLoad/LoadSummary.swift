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
    /// Requests answered with a final (non-error) reply per second of the measured window.
    public var throughputRPS: Double
    /// Requests answered at all (final or error) per second.
    public var answeredRPS: Double
    /// Measured requests offered per second (open loop: close to the target unless the client fell behind).
    public var offeredRPS: Double
    public var finalReplies: Int
    /// Error replies, and requests ended on the client's side because a restarted broker no longer knew them
    /// (outcome `error.broker-restarted`).
    public var errorReplies: Int
    public var progressReplies: Int
    public var unanswered: Int
    /// Measured requests the client's own throttle refused without sending them (``LoadConfiguration/throttle``).
    public var throttled: Int = 0
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

    /// Error replies plus unanswered requests.
    public var errors: Int { errorReplies + unanswered }
}
