/// Commit counts and commit latencies of one open journal.
public struct JournalStatistics: Sendable, Hashable {
    /// Transactions committed (empty commits are not counted).
    public var commits: UInt64
    /// Operations committed.
    public var operations: UInt64
    /// Forced syncs run by the interval policy (0 under ``JournalSync/everyCommit``, where every commit syncs).
    public var syncs: UInt64
    /// Commit latency percentiles, in microseconds (zeros before the first commit).
    public var commitLatency: Percentiles

    /// Latency percentiles in microseconds.
    public struct Percentiles: Sendable, Hashable {
        public var p50: UInt64
        public var p90: UInt64
        public var p99: UInt64
        public var p999: UInt64
        public var max: UInt64

        public init(p50: UInt64 = 0, p90: UInt64 = 0, p99: UInt64 = 0, p999: UInt64 = 0, max: UInt64 = 0) {
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.p999 = p999
            self.max = max
        }
    }

    public init(commits: UInt64 = 0, operations: UInt64 = 0, syncs: UInt64 = 0, commitLatency: Percentiles = .init()) {
        self.commits = commits
        self.operations = operations
        self.syncs = syncs
        self.commitLatency = commitLatency
    }
}
