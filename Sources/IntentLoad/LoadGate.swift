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

    /// Every limit set, with what the run measured and whether it kept it (for reports; the gate passes when all
    /// pass and ``violations(of:)`` is empty).
    public func checks(of summary: LoadSummary) -> [LoadGateCheck] {
        var checks: [LoadGateCheck] = []
        if let maxP99 {
            checks.append(
                LoadGateCheck(
                    flag: "--max-p99", what: "final-reply p99",
                    limit: "≤ " + LoadFormat.microseconds(maxP99.microseconds),
                    measured: LoadFormat.microseconds(summary.finalReply.p99),
                    passed: summary.finalReply.p99 <= maxP99.microseconds))
        }
        if let maxFirstReplyP99 {
            checks.append(
                LoadGateCheck(
                    flag: "--max-first-p99", what: "first-reply p99",
                    limit: "≤ " + LoadFormat.microseconds(maxFirstReplyP99.microseconds),
                    measured: LoadFormat.microseconds(summary.firstReply.p99),
                    passed: summary.firstReply.p99 <= maxFirstReplyP99.microseconds))
        }
        if let maxErrors {
            checks.append(
                LoadGateCheck(
                    flag: "--max-errors", what: "errors (error replies and unanswered)", limit: "≤ \(maxErrors)",
                    measured: "\(summary.errors)", passed: summary.errors <= maxErrors))
        }
        if let maxDeadlineMisses {
            checks.append(
                LoadGateCheck(
                    flag: "--max-deadline-misses", what: "deadline misses", limit: "≤ \(maxDeadlineMisses)",
                    measured: "\(summary.deadlineMisses)", passed: summary.deadlineMisses <= maxDeadlineMisses))
        }
        if let minThroughput {
            checks.append(
                LoadGateCheck(
                    flag: "--min-throughput", what: "throughput (final replies/s)",
                    limit: "≥ " + LoadFormat.grouped(Int(minThroughput)) + " req/s",
                    measured: LoadFormat.grouped(Int(summary.throughputRPS)) + " req/s",
                    passed: summary.throughputRPS >= minThroughput))
        }
        if !isEmpty {
            checks.append(
                LoadGateCheck(
                    flag: "", what: "measured requests", limit: "≥ 1", measured: "\(summary.requests)",
                    passed: summary.requests > 0))
        }
        return checks
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

/// One limit of a ``LoadGate`` against a run: what was measured and whether it kept the limit.
public struct LoadGateCheck: Sendable, Equatable {
    /// The flag that set it (`--max-p99`), empty for the rule that a run must measure something.
    public var flag: String
    /// What it limits, in words.
    public var what: String
    /// The limit, e.g. `≤ 5.00 ms`.
    public var limit: String
    /// What the run measured, in the same unit.
    public var measured: String
    public var passed: Bool

    public init(flag: String, what: String, limit: String, measured: String, passed: Bool) {
        self.flag = flag
        self.what = what
        self.limit = limit
        self.measured = measured
        self.passed = passed
    }
}

extension Duration {
    /// Whole microseconds (negative durations become 0).
    var microseconds: UInt64 { nanoseconds / 1000 }
}
