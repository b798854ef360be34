import ConciergeTop
import Testing

@Suite struct HistogramQuantileTests {
    typealias Bucket = HistogramQuantile.Bucket

    @Test func interpolatesInsideTheBucketWhereTheRankFalls() throws {
        // 100 observations: 10 ≤ 0.1 s, 50 more ≤ 0.5 s, 30 more ≤ 1 s, 10 above.
        let buckets = [
            Bucket(upperBound: 0.1, count: 10), Bucket(upperBound: 0.5, count: 60), Bucket(upperBound: 1, count: 90),
            Bucket(upperBound: .infinity, count: 100),
        ]
        // Median: rank 50, 40 into the (0.1, 0.5] bucket of 50: 0.1 + 0.4 × 40/50 = 0.42.
        #expect(abs(try #require(HistogramQuantile.quantile(0.5, of: buckets)) - 0.42) < 1e-12)
        // 0.05: rank 5, in the first bucket, which starts at 0: 0.1 × 5/10 = 0.05.
        #expect(abs(try #require(HistogramQuantile.quantile(0.05, of: buckets)) - 0.05) < 1e-12)
        // p99: rank 99 falls in +Inf: the highest finite edge.
        #expect(HistogramQuantile.quantile(0.99, of: buckets) == 1)
        // Order does not matter.
        #expect(HistogramQuantile.quantile(0.5, of: buckets.reversed()) == HistogramQuantile.quantile(0.5, of: buckets))
    }

    @Test func answersNothingWithoutObservationsOrInfBucket() {
        #expect(HistogramQuantile.quantile(0.99, of: []) == nil)
        #expect(HistogramQuantile.quantile(0.99, of: [Bucket(upperBound: .infinity, count: 0)]) == nil)
        #expect(HistogramQuantile.quantile(0.99, of: [Bucket(upperBound: 1, count: 5)]) == nil)
        #expect(HistogramQuantile.quantile(1.5, of: [Bucket(upperBound: .infinity, count: 5)]) == nil)
    }

    @Test func p99OverAnIntervalComesFromBucketDeltas() throws {
        // Before: 5 fast requests (≤ 0.1 s). Then, in the interval: 50 more ≤ 0.5 s, 50 in (0.5, 1], 1 above 1 s.
        let previous = MetricsScrape(
            parsing: """
                r_bucket{le="0.1"} 5
                r_bucket{le="0.5"} 5
                r_bucket{le="1.0"} 5
                r_bucket{le="+Inf"} 5
                r_count 5
                """)
        let current = MetricsScrape(
            parsing: """
                r_bucket{le="0.1"} 5
                r_bucket{le="0.5"} 55
                r_bucket{le="1.0"} 105
                r_bucket{le="+Inf"} 106
                r_count 106
                """)
        let deltas = HistogramQuantile.bucketDeltas("r", previous: previous, current: current)
        #expect(deltas.map(\.count) == [0, 50, 100, 101])
        // Rank 0.99 × 101 = 99.99; the (0.5, 1] bucket holds observations 51...100: 0.5 + 0.5 × (99.99 − 50)/50.
        let p99 = try #require(HistogramQuantile.quantile(0.99, of: deltas))
        #expect(abs(p99 - 0.9999) < 1e-9)
        // Over the whole life (no previous scrape) the 5 fast ones count too: rank 104.94, 0.5 + 0.5 × 49.94/50.
        let lifetime = try #require(
            HistogramQuantile.quantile(0.99, of: HistogramQuantile.bucketDeltas("r", previous: nil, current: current)))
        #expect(abs(lifetime - 0.9994) < 1e-9)
    }

    @Test func bucketDeltasSumOverOtherLabelsAndSurviveARestart() {
        let previous = MetricsScrape(
            parsing: """
                h_bucket{intent="Echo",phase="handle",le="1"} 8
                h_bucket{intent="Echo",phase="handle",le="+Inf"} 10
                """)
        let current = MetricsScrape(
            parsing: """
                h_bucket{intent="Echo",phase="handle",le="1"} 2
                h_bucket{intent="Echo",phase="handle",le="+Inf"} 3
                h_bucket{intent="Echo",phase="resolve",le="1"} 4
                h_bucket{intent="Echo",phase="resolve",le="+Inf"} 4
                h_bucket{intent="Other",phase="handle",le="1"} 100
                h_bucket{intent="Other",phase="handle",le="+Inf"} 100
                """)
        // Echo's total fell from 10 to 7: a restart, so everything now is new.
        let deltas = HistogramQuantile.bucketDeltas("h", ["intent": "Echo"], previous: previous, current: current)
        #expect(deltas == [Bucket(upperBound: 1, count: 6), Bucket(upperBound: .infinity, count: 7)])
    }
}

@Suite struct RateTests {
    static let previous = MetricsScrape(
        parsing: """
            concierge_requests_total{intent="Echo",phase="handle",outcome="final"} 100
            concierge_requests_total{intent="Echo",phase="handle",outcome="busy"} 10
            concierge_requests_total{intent="Echo",phase="handle",outcome="timeout"} 1
            concierge_worker_slots{worker="alpha"} 2
            concierge_worker_jobs_in_progress{worker="alpha"} 1
            concierge_worker_jobs_total{worker="alpha",intent="Echo",phase="handle",outcome="final"} 60
            """)
    static let current = MetricsScrape(
        parsing: """
            concierge_requests_total{intent="Echo",phase="handle",outcome="final"} 140
            concierge_requests_total{intent="Echo",phase="resolve",outcome="final"} 4
            concierge_requests_total{intent="Echo",phase="handle",outcome="busy"} 10
            concierge_requests_total{intent="Echo",phase="handle",outcome="timeout"} 3
            concierge_requests_total{intent="Echo",phase="handle",outcome="worker-lost"} 1
            concierge_queue_depth{intent="Echo"} 5
            concierge_queue_oldest_age_seconds{intent="Echo"} 1.5
            concierge_worker_slots{worker="beta"} 1
            concierge_worker_jobs_in_progress{worker="beta"} 1
            concierge_worker_slots{worker="alpha"} 2
            concierge_worker_jobs_in_progress{worker="alpha"} 2
            concierge_worker_jobs_total{worker="alpha",intent="Echo",phase="handle",outcome="final"} 80
            concierge_worker_jobs_total{worker="alpha",intent="Echo",phase="handle",outcome="failed"} 2
            concierge_worker_jobs_total{worker="beta",intent="Echo",phase="handle",outcome="final"} 20
            """)

    @Test func ratesAreGrowthOverTheIntervalByOutcomeClass() throws {
        let figures = TopFigures(previous: Self.previous, current: Self.current, elapsed: 2)
        let echo = try #require(figures.intents.first)
        #expect(figures.intents.map(\.name) == ["Echo"])
        // final: (140 − 100) + 4 (a new series) over 2 s; busy: none; other errors: 2 timeouts + 1 worker-lost.
        #expect(echo.finalRate == 22)
        #expect(echo.busyRate == 0)
        #expect(echo.errorRate == 1.5)
        #expect(echo.queueDepth == 5)
        #expect(echo.oldestAgeSeconds == 1.5)
        #expect((echo.finals, echo.busy, echo.errors) == (144, 10, 4))
        #expect((figures.totalFinals, figures.totalBusy, figures.totalErrors) == (144, 10, 4))
        // Workers sorted by name, rates from their job counters (beta's are all new).
        #expect(figures.workers.map(\.name) == ["alpha", "beta"])
        #expect(figures.workers.map(\.jobRate) == [11, 10])
        #expect(figures.workers.map(\.slots) == [2, 1])
        #expect(figures.workers.map(\.jobs) == [2, 1])
    }

    @Test func aCounterThatFellCountsFromZero() throws {
        // The broker restarted: 140 → 30 means 30 new finals, not −110.
        let restarted = MetricsScrape(
            parsing: #"concierge_requests_total{intent="Echo",phase="handle",outcome="final"} 30"#)
        let figures = TopFigures(previous: Self.current, current: restarted, elapsed: 3)
        #expect(figures.intents.first?.finalRate == 10)
    }

    @Test func theFirstScrapeHasNoRates() throws {
        let figures = TopFigures(previous: nil, current: Self.current, elapsed: 0)
        #expect(figures.intents.first?.finalRate == nil)
        #expect(figures.workers.first?.jobRate == nil)
        #expect(figures.firstReplyP99 == nil)
        #expect(figures.elapsed == nil)
    }
}
