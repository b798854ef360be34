import ConciergeJSON
import Foundation
import Testing

@testable import IntentLoad

/// The release gate.
struct LoadGateTests {
    /// 100 requests: 90 final, 6 error replies, 4 unanswered, 3 deadline misses; 90 final replies per second.
    func summary(finalP99: UInt64 = 5_000, firstP99: UInt64 = 2_000, requests: Int? = nil) -> LoadSummary {
        var recorder = LoadRecorder(origin: 0)
        for index in 0..<100 {
            recorder.recordSent(now: 1)
            if index < 96 { recorder.recordFirstReply(latency: 1_000_000, missedDeadline: index < 3) }
            if index < 90 {
                recorder.recordFinalReply(latency: 2_000_000, outcome: "final.handle.success", isError: false, now: 2)
            } else if index < 96 {
                recorder.recordFinalReply(latency: 2_000_000, outcome: "error.busy", isError: true, now: 2)
            }
        }
        recorder.recordUnanswered(4)
        var summary = makeSummary(
            recorder, durationSeconds: 1,
            firstReply: LatencyPercentiles(
                p50: 1, p90: 1, p99: firstP99, p999: firstP99, max: firstP99, mean: 1, count: 96),
            finalReply: LatencyPercentiles(
                p50: 1, p90: 1, p99: finalP99, p999: finalP99, max: finalP99, mean: 1, count: 96)
        )
        if let requests { summary.requests = requests }
        return summary
    }

    @Test func figuresOfTheSampleSummary() {
        let sample = summary()
        #expect(sample.requests == 100)
        #expect(sample.errors == 10)  // error replies plus unanswered
        #expect(sample.deadlineMisses == 3)
        #expect(sample.throughputRPS == 90)
    }

    @Test func emptyGatePassesAHealthyRun() {
        let gate = LoadGate()
        #expect(gate.isEmpty)
        #expect(gate.violations(of: summary()).isEmpty)
    }

    @Test func gateWithAnyLimitIsNotEmpty() {
        #expect(!LoadGate(maxP99: .milliseconds(5)).isEmpty)
        #expect(!LoadGate(maxFirstReplyP99: .milliseconds(5)).isEmpty)
        #expect(!LoadGate(maxErrors: 0).isEmpty)
        #expect(!LoadGate(maxDeadlineMisses: 0).isEmpty)
        #expect(!LoadGate(minThroughput: 1).isEmpty)
    }

    @Test func finalReplyP99AboveTheLimitBreaksTheGate() throws {
        let gate = LoadGate(maxP99: .milliseconds(5))
        #expect(gate.violations(of: summary(finalP99: 5_000)).isEmpty)  // at the limit: kept
        #expect(gate.violations(of: summary(finalP99: 4_999)).isEmpty)
        let broken = gate.violations(of: summary(finalP99: 5_001))
        try #require(broken.count == 1)
        #expect(broken[0].contains("final-reply p99"))
        #expect(broken[0].contains("5.00 ms"))
    }

    @Test func firstReplyP99AboveTheLimitBreaksTheGate() throws {
        let gate = LoadGate(maxFirstReplyP99: .microseconds(1500))
        #expect(gate.violations(of: summary(firstP99: 1_500)).isEmpty)
        let broken = gate.violations(of: summary(firstP99: 2_000))
        try #require(broken.count == 1)
        #expect(broken[0].contains("first-reply p99"))
        // Only the first-reply limit is checked: a slow final reply does not matter to it.
        #expect(gate.violations(of: summary(finalP99: 9_999_999, firstP99: 10)).isEmpty)
    }

    @Test func errorsCountErrorRepliesAndUnansweredRequests() throws {
        #expect(LoadGate(maxErrors: 10).violations(of: summary()).isEmpty)
        let broken = LoadGate(maxErrors: 9).violations(of: summary())
        try #require(broken.count == 1)
        #expect(broken[0].contains("10 errors"))
        #expect(LoadGate(maxErrors: 0).violations(of: summary()).count == 1)
    }

    @Test func deadlineMissesAboveTheLimitBreakTheGate() throws {
        #expect(LoadGate(maxDeadlineMisses: 3).violations(of: summary()).isEmpty)
        let broken = LoadGate(maxDeadlineMisses: 2).violations(of: summary())
        try #require(broken.count == 1)
        #expect(broken[0].contains("3 deadline misses"))
    }

    @Test func throughputBelowTheMinimumBreaksTheGate() throws {
        #expect(LoadGate(minThroughput: 90).violations(of: summary()).isEmpty)
        let broken = LoadGate(minThroughput: 91).violations(of: summary())
        try #require(broken.count == 1)
        #expect(broken[0].contains("throughput"))
    }

    @Test func everyBrokenLimitIsReported() {
        let gate = LoadGate(
            maxP99: .milliseconds(1), maxFirstReplyP99: .milliseconds(1), maxErrors: 0, maxDeadlineMisses: 0,
            minThroughput: 1_000
        )
        #expect(gate.violations(of: summary()).count == 5)
    }

    @Test func runWithoutMeasuredRequestsNeverPasses() {
        let broken = LoadGate(maxErrors: 0).violations(of: summary(requests: 0))
        #expect(broken.contains { $0.contains("no request was measured") })
    }
}

/// The reports: JSON, the table, percentile distributions, HTML, progress lines.
struct LoadReportTests {
    let recorder = makeRecorder(count: 500, stepMicros: 10)

    @Test func jsonHasTheDocumentedFields() throws {
        let summary = makeSummary(recorder)
        // Through text and back, as `concierge load --json` prints it.
        let json = try JSONValue.parse(summary.json.serializedString())
        #expect(json == summary.json)
        #expect(json["throughput_rps"]?.doubleValue == summary.throughputRPS)
        #expect(json["requests"]?.intValue == 500)
        #expect(json["deadline_misses"]?.intValue == 0)
        #expect(json["outcomes"] == ["final.handle.success": 500])
        for key in ["first_reply_us", "final_reply_us"] {
            let percentiles = try #require(json[key], "\(key)")
            var previous = 0
            for name in ["p50", "p90", "p99", "p999", "max"] {
                let value = try #require(percentiles[name]?.intValue, "\(key).\(name)")
                #expect(value >= previous, "\(key).\(name)")
                previous = value
            }
            #expect(percentiles["count"]?.intValue == 500)
            #expect(percentiles["mean"]?.doubleValue != nil)
        }
        #expect(json["final_reply_us"]?["p99"]?.intValue == Int(summary.finalReply.p99))
        #expect(json["first_reply_us"]?["max"]?.intValue == Int(summary.firstReply.max))
        for key in [
            "mode", "connections", "duration_s", "warmup_s", "deadline_ms", "workload", "answered_rps", "offered_rps",
            "final_replies", "error_replies", "progress_replies", "unanswered", "errors", "client_backlog_max",
            "stray_replies", "timeline", "concurrency",
        ] {
            #expect(json[key] != nil, "\(key)")
        }
        #expect(json["target_rate"] == nil)  // closed loop
        #expect(json["timeline"]?.arrayValue?.count == summary.timeline.count)
        let sent = json["timeline"]?.arrayValue?.compactMap { $0["sent"]?.intValue }.reduce(0, +)
        #expect(sent == 500)
    }

    @Test func openLoopJSONNamesTheTargetRate() {
        let json = makeSummary(recorder, mode: "open").json
        #expect(json["mode"] == "open")
        #expect(json["target_rate"]?.doubleValue == 1000)
        #expect(json["concurrency"] == nil)
    }

    @Test func finalReplyDistributionIsAnHdrHistogramPercentileDistribution() throws {
        let summary = makeSummary(recorder)
        let lines = summary.finalReplyDistribution.split(separator: "\n", omittingEmptySubsequences: false)
        try #require(lines.count > 10)
        #expect(lines[0].split(separator: " ") == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"])
        // Data lines: value (ms), percentile (0...1), count to here, and 1/(1-p) except on the last one.
        let data = lines.dropFirst().filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { $0.split(separator: " ") }
        try #require(data.count > 10)
        var previousValue = 0.0, previousPercentile = 0.0, previousCount = 0
        for fields in data {
            try #require(fields.count >= 3)
            let value = try #require(Double(fields[0])), percentile = try #require(Double(fields[1]))
            let count = try #require(Int(fields[2]))
            #expect(value >= previousValue && percentile >= previousPercentile && count >= previousCount)
            (previousValue, previousPercentile, previousCount) = (value, percentile, count)
        }
        #expect(previousPercentile == 1)
        #expect(previousCount == 500)
        // Values are in milliseconds: the largest latency was 5,000 µs.
        #expect(abs(previousValue - 5.0) < 0.01)
        let maxLine = try #require(lines.first { $0.hasPrefix("#[Max") })
        #expect(maxLine.contains("Total count"))
        let total = maxLine.split(separator: "=").last?.filter(\.isNumber)
        #expect(total == "500")
        #expect(lines.contains { $0.hasPrefix("#[Mean") })
    }

    @Test func firstReplyDistributionDescribesTheFirstReplies() throws {
        let summary = makeSummary(recorder)
        let text = summary.firstReplyDistribution
        #expect(text != summary.finalReplyDistribution)
        let maxLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("#[Max") })
        // First replies came at half the final-reply latency: max 2.5 ms.
        #expect(maxLine.contains("2.50"))
    }

    @Test func htmlHasChartsAndTheFigures() {
        let summary = makeSummary(recorder)
        let html = summary.html
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("</html>"))
        #expect(html.components(separatedBy: "<svg").count - 1 == 2)  // percentiles, timeline
        #expect(html.components(separatedBy: "<polyline").count - 1 == 3)  // first, final, p99 over time
        // A summary table, not a copy of the terminal's.
        #expect(!html.contains("<pre>"))
        #expect(html.contains("<table class=\"summary\">"))
        #expect(html.contains("<tr><th>Requests</th><td class=\"n\">500</td>"))
        #expect(html.contains(LoadSummary.milliseconds(Double(summary.finalReply.p99) / 1000, unit: false)))
        #expect(html.contains(LoadSummary.milliseconds(Double(summary.firstReply.p50) / 1000, unit: false)))
        #expect(html.contains("final.handle.success"))
        #expect(!html.contains("<script"))
    }

    @Test func htmlNamesTheRunItReportsAndItsGate() throws {
        let summary = makeSummary(recorder)
        let context = LoadReportContext(
            date: "2026-11-28 06:30:12 UTC", host: "bench-7", endpoint: "tcp://127.0.0.1:5555",
            version: "git 5b92102", commandLine: "concierge load --requests 500 --max-p99 1ms --html r.html",
            gate: LoadGate(maxP99: .milliseconds(1), minThroughput: 1).checks(of: summary))
        let html = summary.html(context: context)
        for expected in [
            "2026-11-28 06:30:12 UTC", "bench-7", "tcp://127.0.0.1:5555", "git 5b92102",
            "concierge load --requests 500 --max-p99 1ms --html r.html",
        ] {
            #expect(html.contains(expected), "\(expected)")
        }
        // The final-reply p99 (about 4.95 ms) breaks --max-p99 1ms; the throughput keeps --min-throughput 1.
        #expect(html.contains("Gate: <span class=\"fail\">FAILED</span>"))
        #expect(html.contains("<code>--max-p99</code>"))
        #expect(html.contains("<td class=\"fail\">FAIL</td>"))
        #expect(html.contains("<td class=\"pass\">pass</td>"))
        let passing = summary.html(
            context: LoadReportContext(
                date: "d", host: "h", endpoint: "e", version: "v", commandLine: "c",
                gate: LoadGate(maxP99: .seconds(1)).checks(of: summary)))
        #expect(passing.contains("Gate: <span class=\"pass\">PASSED</span>"))
        #expect(summary.html.contains("No limits were given"))
    }

    @Test func htmlChartsHaveUnitsUncutLabelsAndAVisibleFirstReplyCurve() throws {
        let html = makeSummary(recorder).html
        #expect(html.contains("latency (ms, log scale)"))
        #expect(html.contains("final-reply p99 (ms)"))
        // The last percentile label sits inside the 900-wide chart with room for its 8 characters.
        let label = try #require(html.range(of: "\" text-anchor=\"middle\">99.9999%</text>"))
        let opening = try #require(html[..<label.lowerBound].range(of: "<text x=\"", options: .backwards))
        let x = try #require(Double(html[opening.upperBound...].prefix { $0 != "\"" }))
        #expect(x + 30 <= 900, "x = \(x)")
        // The first reply is drawn after (over) the final reply, dashed.
        let final = try #require(html.range(of: "<polyline fill=\"none\" stroke=\"#2b6cd9\""))
        let first = try #require(html.range(of: "<polyline fill=\"none\" stroke=\"#d9822b\""))
        #expect(final.lowerBound < first.lowerBound)
        let firstLine = html[first.lowerBound...].prefix { $0 != "\n" }
        #expect(firstLine.contains("stroke-dasharray"))
    }

    @Test func handlerFailuresAreCountedApartNotAsThroughput() {
        var recorder = LoadRecorder(origin: 0)
        for index in 0..<10 {
            recorder.recordSent(now: 1)
            recorder.recordFirstReply(latency: 1_000_000, missedDeadline: false)
            let outcome = index < 6 ? "final.handle.success" : "final.handle.failure"
            recorder.recordFinalReply(latency: 2_000_000, outcome: outcome, isError: false, now: 2)
        }
        #expect(recorder.finalReplies == 6)
        #expect(recorder.failureReplies == 4)
        #expect(recorder.errorReplies == 0)
        #expect(LoadOutcome.isFailure("final.confirm.failureInsufficientFunds"))
        #expect(LoadOutcome.isFailure("final.handle.failureRequiringAppLaunch"))
        #expect(!LoadOutcome.isFailure("final.handle.success"))
        #expect(!LoadOutcome.isFailure("error.failure"))
        var summary = makeSummary(recorder)
        summary.failureReplies = recorder.failureReplies
        #expect(summary.throughputRPS == 6)
        #expect(summary.json["failure_replies"] == 4)
        #expect(summary.table.contains("handler failures 4 (not counted as throughput)"))
        #expect(summary.html.contains("<tr><th>Handler failures</th><td class=\"n\">4</td>"))
        #expect(summary.html.contains("<tr><th>Final replies</th><td class=\"n\">6</td>"))
    }

    @Test func aMixIsBrokenDownByLabel() throws {
        var recorder = LoadRecorder(origin: 0, items: 2)
        for index in 0..<30 {
            let item = index % 3 == 0 ? 1 : 0
            recorder.recordSent(now: 1, item: item)
            let outcome = item == 1 ? "final.handle.failure" : "final.handle.success"
            recorder.recordFinalReply(
                latency: UInt64(item == 1 ? 8_000_000 : 1_000_000), outcome: outcome, isError: false, now: 2,
                item: item)
        }
        recorder.recordSent(now: 1, item: 1)
        recorder.recordUnanswered(1, item: 1)
        #expect(recorder.items.map(\.requests) == [20, 11])
        #expect(recorder.items.map(\.finalReplies) == [20, 0])
        #expect(recorder.items.map(\.failureReplies) == [0, 10])
        #expect(recorder.items.map(\.unanswered) == [0, 1])
        var summary = makeSummary(recorder, workload: ["Ride (lifecycle, weight 2)", "Pay (handle, weight 1)"])
        summary.labels = [
            LoadLabelSummary(
                label: "Ride", phase: "lifecycle", weight: 2, record: recorder.items[0],
                runHistogram: recorder.finalReply, window: 1),
            LoadLabelSummary(
                label: "Pay", phase: "handle", weight: 1, record: recorder.items[1], runHistogram: recorder.finalReply,
                window: 1),
        ]
        #expect(summary.labels.map(\.throughputRPS) == [20, 0])
        #expect(summary.labels[1].finalReply.p50 > summary.labels[0].finalReply.p99)
        let html = summary.html
        #expect(html.contains("<h2>By label</h2>"))
        #expect(html.contains("<tr><td>Ride</td><td>lifecycle</td><td class=\"n\">2</td><td class=\"n\">20</td>"))
        #expect(html.contains("<tr><td>Pay</td><td>handle</td><td class=\"n\">1</td><td class=\"n\">11</td>"))
        #expect(summary.json["labels"]?[1]?["failure_replies"] == 10)
        #expect(summary.table.contains("Pay "))
        // A single intent has no breakdown of its own.
        #expect(!makeSummary(self.recorder).html.contains("By label"))
    }

    @Test func htmlEscapesWhatItQuotes() {
        let summary = makeSummary(recorder, workload: ["<b>Echo</b> & \"friends\" (handle, weight 1)"])
        let html = summary.html
        #expect(html.contains("&lt;b&gt;Echo&lt;/b&gt; &amp; &quot;friends&quot;"))
        #expect(!html.contains("<b>Echo"))
    }

    @Test func htmlOfARunWithoutRepliesSaysSo() {
        var empty = LoadRecorder(origin: 0)
        empty.recordSent(now: 1)
        empty.recordUnanswered(1)
        empty.finish(now: 2)
        let html = makeSummary(empty).html
        #expect(html.contains("No replies were measured."))
        #expect(html.contains("<svg"))  // the timeline still has its one interval
    }

    @Test func tableListsTheFiguresAndEveryOutcome() {
        var recorder = makeRecorder(count: 1_234, stepMicros: 1)
        recorder.recordSent(now: 1)
        recorder.recordFinalReply(latency: 1_000, outcome: "error.busy", isError: true, now: 1)
        let table = makeSummary(recorder).table
        #expect(table.contains("closed loop, 10 in flight"))
        #expect(table.contains("requests      1,235"))
        #expect(table.contains("first reply"))
        #expect(table.contains("final reply"))
        let busy = table.range(of: "error.busy"), success = table.range(of: "final.handle.success")
        #expect(busy != nil && success != nil && busy!.lowerBound < success!.lowerBound)  // sorted by key
        #expect(table.contains("errors 1"))
        #expect(makeSummary(recorder, mode: "open").table.contains("open loop, 1,000 req/s target"))
    }

    @Test func numbersAreFormattedForPeople() {
        #expect(LoadFormat.grouped(0) == "0")
        #expect(LoadFormat.grouped(999) == "999")
        #expect(LoadFormat.grouped(1_000) == "1,000")
        #expect(LoadFormat.grouped(1_234_567) == "1,234,567")
        #expect(LoadFormat.grouped(-45_000) == "-45,000")
        #expect(LoadFormat.microseconds(850) == "850 µs")
        #expect(LoadFormat.microseconds(1_250) == "1.25 ms")
        #expect(LoadFormat.microseconds(2_100_000) == "2.10 s")
        #expect(LoadFormat.fixed(1.005, 1) == "1.0")
        #expect(LoadFormat.fixed(-0.5, 2) == "-0.50")
        #expect(LoadFormat.fixed(.nan, 2) == "0")
    }

    @Test func progressLineShowsWarmUpRateAndCounts() {
        var progress = LoadProgress(
            elapsedSeconds: 3.04, warmingUp: false, rate: 45_123.4, p99Microseconds: 1_200, errors: 2,
            deadlineMisses: 1, inFlight: 100, sent: 1_000
        )
        #expect(progress.line.contains("3.0s]"))
        #expect(progress.line.contains("45,123 req/s"))
        #expect(progress.line.contains("p99 1.20 ms"))
        #expect(progress.line.contains("errors 2"))
        #expect(progress.line.contains("deadline misses 1"))
        #expect(progress.line.contains("in flight 100"))
        #expect(!progress.line.contains("warm-up"))
        progress.warmingUp = true
        #expect(progress.line.contains("warm-up"))
    }
}
