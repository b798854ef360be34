public import Histogram

/// The percentiles a load report gives of one latency distribution, in microseconds.
public struct LatencyPercentiles: Sendable, Equatable {
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var max: UInt64
    public var mean: Double
    public var count: UInt64

    public init(p50: UInt64, p90: UInt64, p99: UInt64, p999: UInt64, max: UInt64, mean: Double, count: UInt64) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
        self.count = count
    }

    /// The percentiles of `histogram` (zeros when it is empty).
    public init(_ histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else {
            self.init(p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0)
            return
        }
        self.init(
            p50: histogram.valueAtPercentile(50), p90: histogram.valueAtPercentile(90),
            p99: histogram.valueAtPercentile(99), p999: histogram.valueAtPercentile(99.9), max: histogram.max,
            mean: histogram.mean, count: histogram.totalCount
        )
    }
}

extension Histogram where Count == UInt64 {
    /// A latency histogram in microseconds: 1 µs to 1 hour, 3 significant digits.
    static func latency() -> Self {
        Histogram(
            lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    }

    /// Records a latency given in nanoseconds (clamped into the trackable range).
    mutating func recordNanoseconds(_ nanoseconds: UInt64) {
        let micros = Swift.min(Swift.max(nanoseconds / 1000, 1), 3_600_000_000)
        _ = record(micros)
    }
}
