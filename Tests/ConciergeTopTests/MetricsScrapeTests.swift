import ConciergeTop
import Testing

@Suite struct MetricsScrapeTests {
    @Test func parsesSamplesSkippingHelpTypeAndComments() {
        let scrape = MetricsScrape(
            parsing: """
                # HELP concierge_requests_in_flight Requests the broker holds.
                # TYPE concierge_requests_in_flight gauge
                concierge_requests_in_flight 7
                # a comment, then a blank line

                # TYPE concierge_requests_total counter
                concierge_requests_total{intent="Echo",phase="handle",outcome="final"} 12
                concierge_requests_total{intent="Echo",phase="handle",outcome="busy"} 3 1700000000000
                concierge_requests_total{intent="Echo",phase="resolve",outcome="final"} 1.5e1

                """)
        #expect(scrape.samples.count == 4)
        #expect(scrape.skippedLines == 0)
        #expect(scrape.value("concierge_requests_in_flight") == 7)
        #expect(scrape.value("concierge_requests_total", ["outcome": "busy"]) == 3)
        #expect(scrape.sum("concierge_requests_total", ["intent": "Echo", "outcome": "final"]) == 27)
        #expect(scrape.sum("concierge_requests_total") == 30)
        #expect(scrape.value("concierge_requests_total", ["intent": "Other"]) == nil)
        #expect(!scrape.contains("concierge_workers"))
    }

    @Test func unescapesLabelValues() throws {
        let scrape = MetricsScrape(
            parsing: #"""
                concierge_worker_slots{worker="a \"quoted\" name",note="back\\slash"} 4
                concierge_worker_slots{worker="two\nlines, {braces} and = signs"} 2
                concierge_worker_slots{ worker = "spaced" , } 1
                """#)
        #expect(scrape.skippedLines == 0)
        let names = scrape.samples(named: "concierge_worker_slots").map { $0.labels["worker"] }
        #expect(names == [#"a "quoted" name"#, "two\nlines, {braces} and = signs", "spaced"])
        #expect(scrape.samples[0].labels["note"] == #"back\slash"#)
    }

    @Test func readsInfinitiesAndNaN() throws {
        let scrape = MetricsScrape(
            parsing: """
                h_bucket{le="0.5"} 1
                h_bucket{le="+Inf"} 2
                g_up +Inf
                g_down -Inf
                g_nan NaN
                """)
        #expect(scrape.value("h_bucket", ["le": "+Inf"]) == 2)
        #expect(scrape.value("g_up") == .infinity)
        #expect(scrape.value("g_down") == -.infinity)
        #expect(try #require(scrape.value("g_nan")).isNaN)
        let buckets = HistogramQuantile.buckets("h", in: scrape)
        #expect(buckets.map(\.upperBound) == [0.5, .infinity])
    }

    @Test func skipsMalformedLinesAndKeepsTheRest() {
        let scrape = MetricsScrape(
            parsing: """
                good 1
                {no_name="x"} 1
                unterminated{a="b 1
                no_value
                bad_value abc
                1starts_with_a_digit 2
                also_good{a="b"} 2
                """)
        #expect(scrape.samples.map(\.name) == ["good", "also_good"])
        #expect(scrape.skippedLines == 5)
    }
}

@Suite struct TopTargetTests {
    @Test func acceptsHostPortAndURLs() throws {
        #expect(try TopTarget(parsing: "127.0.0.1:9464") == TopTarget(host: "127.0.0.1", port: 9464))
        #expect(try TopTarget(parsing: "http://localhost:80/") == TopTarget(host: "localhost", port: 80))
        #expect(try TopTarget(parsing: "[::1]:9464") == TopTarget(host: "::1", port: 9464))
        #expect(try TopTarget(parsing: "[::1]:9464").description == "[::1]:9464")
    }

    @Test func refusesWhatItCannotReach() {
        for text in ["", "host", "host:", ":80", "host:0", "host:70000", "https://host:443", "http://h:1/metrics"] {
            #expect(throws: TopTargetError.self, "\(text)") { try TopTarget(parsing: text) }
        }
    }
}
