import Histogram

/// Counts commits and records their latencies (for ``JournalStatistics``).
struct CommitRecorder {
    private var latency = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    private var commits: UInt64 = 0
    private var operations: UInt64 = 0
    private var syncs: UInt64 = 0

    mutating func recordCommit(operations count: Int, nanoseconds: UInt64) {
        commits += 1
        operations += UInt64(count)
        _ = latency.record(min(max(nanoseconds / 1000, 1), 3_600_000_000))
    }

    mutating func recordSync() { syncs += 1 }

    var statistics: JournalStatistics {
        var percentiles = JournalStatistics.Percentiles()
        if latency.totalCount > 0 {
            percentiles = JournalStatistics.Percentiles(
                p50: latency.valueAtPercentile(50), p90: latency.valueAtPercentile(90),
                p99: latency.valueAtPercentile(99), p999: latency.valueAtPercentile(99.9), max: latency.max)
        }
        return JournalStatistics(commits: commits, operations: operations, syncs: syncs, commitLatency: percentiles)
    }
}
