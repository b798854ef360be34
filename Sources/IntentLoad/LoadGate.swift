import IntentWire

/// Limits a load run must keep, for release pipelines: `concierge load ... --max-p99 5ms --max-errors 0`
/// exits non-zero when one is broken.
public struct LoadGate: Sendable {
    /// Highest p99 of the time to the final reply.
    public var maxP99: Duration?
    /// Highest p99 of the time to the first reply.
    public var maxFirstReplyP99: Duration?
    /// Most error replies plus unanswered requests.
    public var maxErrors: Int?
    /// Most deadline misses.
    public var maxDeadlineMisses: Int?
    /// Lowest throughput (final replies per second).
    public var minThroughput: Double?

    public init(
        maxP99: Duration? = nil, maxFirstReplyP99: Duration? = nil, maxErrors: Int? = nil,
        maxDeadlineMisses: Int? = nil, minThroughput: Double? = nil
    ) {
        self.maxP99 = maxP99
        self.maxFirstReplyP99 = maxFirstReplyP99
        self.maxErrors = maxErrors
        self.maxDeadlineMisses = maxDeadlineMisses
        self.minThroughput = minThroughput
    }

    /// Whether any limit is set.
    public var isEmpty: Bool {
        maxP99 == nil && maxFirstReplyP99 == nil && maxErrors == nil && maxDeadlineMisses == nil
            && minThroughput == nil
    }

    /// The limits `summary` breaks, one sentence each (empty: the gate passes).
    public func violations(of summary: LoadSummary) -> [String] {
        var broken: [String] = []
        if let maxP99, summary.finalReply.p99 > maxP99.microseconds {
            broken.append(
                "final-reply p99 \(LoadFormat.microseconds(summary.finalReply.p99)) is above "
                    + LoadFormat.microseconds(maxP99.microseconds)
            )
        }
        if let maxFirstReplyP99, summary.firstReply.p99 > maxFirstReplyP99.microseconds {
            broken.append(
                "first-reply p99 \(LoadFormat.microseconds(summary.firstReply.p99)) is above "
                    + LoadFormat.microseconds(maxFirstReplyP99.microseconds)
            )
        }
        if let maxErrors, summary.errors > maxErrors {
            broken.append(
                "\(summary.errors) errors (error replies and unanswered requests), at most \(maxErrors) allowed")
        }
        if let maxDeadlineMisses, summary.deadlineMisses > maxDeadlineMisses {
            broken.append("\(summary.deadlineMisses) deadline misses, at most \(maxDeadlineMisses) allowed")
        }
        if let minThroughput, summary.throughputRPS < minThroughput {
            broken.append(
                "throughput \(LoadFormat.grouped(Int(summary.throughputRPS))) req/s is below "
                    + LoadFormat.grouped(Int(minThroughput))
            )
        }
        if summary.requests == 0 { broken.append("no request was measured") }
        return broken
    }
}

extension Duration {
    /// Whole microseconds (negative durations become 0).
    var microseconds: UInt64 { nanoseconds / 1000 }
}
