/// Quantiles of a Prometheus histogram's cumulative buckets, as PromQL's `histogram_quantile` computes them: find the
/// bucket where the rank falls and interpolate linearly inside it, taking the lowest bucket to start at 0 (when its
/// upper edge is positive) and answering the highest finite edge when the rank falls in the `+Inf` bucket.
public enum HistogramQuantile {
    /// One cumulative bucket: how many observations were at most `upperBound` (`le`).
    public struct Bucket: Sendable, Equatable {
        public var upperBound: Double
        public var count: Double

        public init(upperBound: Double, count: Double) {
            self.upperBound = upperBound
            self.count = count
        }
    }

    /// The `q`-quantile (0...1) of `buckets` (cumulative counts, in any order), or nil when there are no observations,
    /// no `+Inf` bucket, or `q` is out of range.
    public static func quantile(_ q: Double, of buckets: [Bucket]) -> Double? {
        guard (0...1).contains(q) else { return nil }
        var buckets = buckets.filter { !$0.upperBound.isNaN }.sorted { $0.upperBound < $1.upperBound }
        guard let last = buckets.last, last.upperBound == .infinity else { return nil }
        // Counts must not fall from one bucket to the next (a scrape racing an observation can make them): make them
        // monotonic, as Prometheus does.
        for index in buckets.indices.dropFirst() where buckets[index].count < buckets[index - 1].count {
            buckets[index].count = buckets[index - 1].count
        }
        let total = last.count
        guard total > 0 else { return nil }
        let rank = q * total
        guard let index = buckets.firstIndex(where: { $0.count >= rank }) else { return nil }
        if buckets[index].upperBound == .infinity {
            return buckets.count >= 2 ? buckets[buckets.count - 2].upperBound : nil
        }
        var lower = 0.0
        var below = 0.0
        if index > 0 {
            lower = buckets[index - 1].upperBound
            below = buckets[index - 1].count
        } else if buckets[index].upperBound <= 0 {
            return buckets[index].upperBound
        }
        let upper = buckets[index].upperBound
        let inBucket = buckets[index].count - below
        guard inBucket > 0 else { return upper }
        return lower + (upper - lower) * (rank - below) / inBucket
    }

    /// The buckets of histogram `name` (its `name_bucket` samples) whose other labels include `labels`, summed over
    /// the remaining labels (e.g. every phase), as `current` minus `previous` (the observations between two scrapes).
    /// A bucket that fell (the process restarted) counts from zero, as Prometheus' `increase` does.
    public static func bucketDeltas(
        _ name: String, _ labels: [String: String] = [:], previous: MetricsScrape?, current: MetricsScrape
    ) -> [Bucket] {
        let now = buckets(name, labels, in: current)
        guard let previous else { return now }
        let before = Dictionary(
            buckets(name, labels, in: previous).map { ($0.upperBound, $0.count) }, uniquingKeysWith: +)
        // A reset shows as the total falling: then the current counts are the increase.
        let reset = (now.last?.count ?? 0) < (before[.infinity] ?? 0)
        return now.map { bucket in
            let old = reset ? 0 : (before[bucket.upperBound] ?? 0)
            return Bucket(upperBound: bucket.upperBound, count: max(0, bucket.count - old))
        }
    }

    /// The cumulative buckets of histogram `name` in one scrape, summed over the labels not in `labels`, by edge.
    public static func buckets(_ name: String, _ labels: [String: String] = [:], in scrape: MetricsScrape) -> [Bucket] {
        var counts: [Double: Double] = [:]
        for sample in scrape.samples(named: name + "_bucket")
        where labels.allSatisfy({ sample.labels[$0.key] == $0.value }) {
            guard let edgeText = sample.labels["le"], let edge = MetricsScrape.parseValue(edgeText[...]) else {
                continue
            }
            counts[edge, default: 0] += sample.value
        }
        return counts.map { Bucket(upperBound: $0.key, count: $0.value) }.sorted { $0.upperBound < $1.upperBound }
    }
}
