import Foundation
import Histogram

extension LoadSummary {
    /// The report without the run's context (see ``html(context:)``).
    public var html: String { html(context: nil) }

    /// A self-contained HTML report (inline SVG, no scripts or network) to share: the run (date, host, endpoint,
    /// version, command line), the gate's limits passed or failed, a summary table, latency percentiles, a
    /// per-label breakdown for a mix, the outcomes, the latency distribution of the first and final reply by
    /// percentile, and throughput and p99 over time. Handlers' failures are counted apart, not as throughput.
    public func html(context: LoadReportContext?) -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Concierge load report</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
            h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
            table { border-collapse: collapse; margin: 0.6em 0 1em; } td, th { border: 1px solid #ccc; padding: 4px 10px; }
            td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f4f4f4; text-align: left; }
            table.meta th { width: 11em; } code { font-size: 13px; word-break: break-all; }
            .pass { color: #1a7f37; font-weight: 600; } .fail { color: #c62828; font-weight: 600; }
            .verdict { font-size: 16px; margin: 0.4em 0; } .note { color: #666; font-size: 13px; }
            svg { background: #fff; border: 1px solid #ddd; margin: 0.5em 0 1.5em; }
            .axis { stroke: #888; } .p99 { stroke: #333; stroke-width: 2; } .grid { stroke: #eee; } text { font-size: 11px; fill: #444; }
            text.title { font-size: 12px; font-weight: 600; }
            </style></head><body>
            <h1>Concierge load report</h1>

            """
        page += "<p>\(Self.escape(shapeDescription))</p>\n"
        page += runTable(context)
        page += gateSection(context)
        page += "<h2>Summary</h2>\n" + summaryTable()
        page += "<h2>Latency</h2>\n" + latencyTable()
        if labels.count > 1 { page += "<h2>By label</h2>\n" + labelTable() }
        page += "<h2>Outcomes</h2>\n" + outcomeTable()
        page += "<h2>Latency by percentile</h2>\n"
        page += percentileChart()
        page += "<h2>Throughput and p99 over time</h2>\n"
        page += timelineChart()
        page += "</body></html>\n"
        return page
    }

    /// `closed loop, 10 in flight over 2 connection(s), deadline 3000 ms`.
    var shapeDescription: String {
        let shape =
            mode == "closed"
            ? "Closed loop, \(concurrency ?? 0) in flight"
            : "Open loop, \(LoadFormat.grouped(Int(targetRate ?? 0))) req/s target"
        return "\(shape) over \(connections) connection(s), deadline \(deadlineMilliseconds) ms"
            + (idempotencyKeys ? ", a fresh idempotency key per request" : "")
            + "; measured \(LoadFormat.fixed(durationSeconds, 2)) s after a \(LoadFormat.fixed(warmupSeconds, 1)) s "
            + "warm-up."
    }

    private func runTable(_ context: LoadReportContext?) -> String {
        var rows: [(String, String)] = []
        if let context {
            rows += [
                ("Date", Self.escape(context.date)), ("Host", Self.escape(context.host)),
                ("Broker endpoint", "<code>\(Self.escape(context.endpoint))</code>"),
                ("Concierge version", Self.escape(context.version)),
                ("Command line", "<code>\(Self.escape(context.commandLine))</code>"),
            ]
        }
        rows.append(("Workload", workload.map(Self.escape).joined(separator: "<br>")))
        var html = "<table class=\"meta\">\n"
        for (name, value) in rows { html += "<tr><th>\(name)</th><td>\(value)</td></tr>\n" }
        return html + "</table>\n"
    }

    private func gateSection(_ context: LoadReportContext?) -> String {
        var html = "<h2>Gate</h2>\n"
        let checks = context?.gate ?? []
        guard !checks.isEmpty else {
            return html
                + "<p class=\"note\">No limits were given (--max-p99, --max-first-p99, --max-errors, "
                + "--max-deadline-misses, --min-throughput).</p>\n"
        }
        let passed = checks.allSatisfy(\.passed)
        html +=
            "<p class=\"verdict\">Gate: <span class=\"\(passed ? "pass" : "fail")\">\(passed ? "PASSED" : "FAILED")"
            + "</span></p>\n"
        html += "<table>\n<tr><th>Limit</th><th>Flag</th><th class=\"n\">Allowed</th><th class=\"n\">Measured</th>"
        html += "<th>Result</th></tr>\n"
        for check in checks {
            html += "<tr><td>\(Self.escape(check.what))</td><td><code>\(Self.escape(check.flag))</code></td>"
            html +=
                "<td class=\"n\">\(Self.escape(check.limit))</td><td class=\"n\">\(Self.escape(check.measured))</td>"
            html += "<td class=\"\(check.passed ? "pass" : "fail")\">\(check.passed ? "pass" : "FAIL")</td></tr>\n"
        }
        return html + "</table>\n"
    }

    private func summaryTable() -> String {
        func rate(_ value: Double) -> String { LoadFormat.grouped(Int(value.rounded())) + " req/s" }
        let rows: [(String, String, String)] = [
            ("Throughput", rate(throughputRPS), "final replies that did what was asked, per second"),
            ("Answered", rate(answeredRPS), "final, failure or error replies per second"),
            ("Offered", rate(offeredRPS), "measured requests offered per second"),
            ("Requests", LoadFormat.grouped(requests), "measured requests offered"),
            ("Final replies", LoadFormat.grouped(finalReplies), "counted as throughput"),
            (
                "Handler failures", LoadFormat.grouped(failureReplies),
                "final replies with a failure code: answered, not counted as throughput"
            ),
            ("Error replies", LoadFormat.grouped(errorReplies), "busy, timeout, unknown-intent, …"),
            ("Unanswered", LoadFormat.grouped(unanswered), "no final reply when the run ended"),
            ("Deadline misses", LoadFormat.grouped(deadlineMisses), "first reply later than the deadline"),
            ("Progress replies", LoadFormat.grouped(progressReplies), ""),
            ("Throttled", LoadFormat.grouped(throttled), "refused by the client itself, never sent"),
            ("Client backlog (max)", LoadFormat.grouped(clientBacklogMax), "due requests waiting for a slot"),
            ("Stray replies", LoadFormat.grouped(strayReplies), "replies matching no request (should be 0)"),
        ]
        var html = "<table class=\"summary\">\n<tr><th>Figure</th><th class=\"n\">Value</th><th>Meaning</th></tr>\n"
        for (name, value, meaning) in rows {
            html +=
                "<tr><th>\(name)</th><td class=\"n\">\(value)</td><td class=\"note\">\(Self.escape(meaning))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    private func latencyTable() -> String {
        var html = "<table>\n<tr><th>Latency (ms)</th>"
        for name in ["p50", "p90", "p99", "p99.9", "max", "mean", "count"] { html += "<th class=\"n\">\(name)</th>" }
        html += "</tr>\n"
        for (name, value) in [("First reply", firstReply), ("Final reply", finalReply)] {
            html += "<tr><th>\(name)</th>"
            for micros in [value.p50, value.p90, value.p99, value.p999, value.max] {
                html += "<td class=\"n\">\(Self.milliseconds(Double(micros) / 1000, unit: false))</td>"
            }
            html += "<td class=\"n\">\(Self.milliseconds(value.mean / 1000, unit: false))</td>"
            html += "<td class=\"n\">\(LoadFormat.grouped(Int(value.count)))</td></tr>\n"
        }
        return html + "</table>\n<p class=\"note\">From each request's intended send time; the first reply is the "
            + "progress reply if one came, else the final one.</p>\n"
    }

    private func labelTable() -> String {
        var html = "<table class=\"labels\">\n<tr><th>Label</th><th>Phase</th>"
        for name in [
            "Weight", "Requests", "Throughput", "Final", "Failures", "Errors", "Unanswered", "Final p50 (ms)",
            "Final p99 (ms)",
        ] {
            html += "<th class=\"n\">\(name)</th>"
        }
        html += "</tr>\n"
        for label in labels {
            html += "<tr><td>\(Self.escape(label.label))</td><td>\(Self.escape(label.phase))</td>"
            let cells = [
                "\(label.weight)", LoadFormat.grouped(label.requests),
                LoadFormat.grouped(Int(label.throughputRPS.rounded())) + " req/s",
                LoadFormat.grouped(label.finalReplies),
                LoadFormat.grouped(label.failureReplies), LoadFormat.grouped(label.errorReplies),
                LoadFormat.grouped(label.unanswered),
                Self.milliseconds(Double(label.finalReply.p50) / 1000, unit: false),
                Self.milliseconds(Double(label.finalReply.p99) / 1000, unit: false),
            ]
            for cell in cells { html += "<td class=\"n\">\(cell)</td>" }
            html += "</tr>\n"
        }
        return html + "</table>\n"
    }

    private func outcomeTable() -> String {
        guard !outcomes.isEmpty else { return "<p class=\"note\">No outcome was recorded.</p>\n" }
        var html = "<table>\n<tr><th>Outcome</th><th class=\"n\">Count</th></tr>\n"
        for key in outcomes.keys.sorted() {
            let failure = LoadOutcome.isFailure(key) ? " <span class=\"note\">(handler failure)</span>" : ""
            html +=
                "<tr><td><code>\(Self.escape(key))</code>\(failure)</td>"
                + "<td class=\"n\">\(LoadFormat.grouped(outcomes[key] ?? 0))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Latency (ms, log scale) against percentile on the usual 1/(1-p) axis (50%, 90%, 99%, ... 99.9999%). The
    /// final reply is drawn first, as a solid line; the first reply on top of it, dashed, so that it stays visible
    /// where the two coincide (a request answered at once has the same first and final reply).
    func percentileChart() -> String {
        let width = 900.0, height = 380.0, left = 80.0, right = 60.0, top = 24.0, bottom = 48.0
        let series: [(name: String, color: String, dash: String, histogram: Histogram<UInt64>)] = [
            ("final reply", "#2b6cd9", "", finalReplyHistogram),
            ("first reply", "#d9822b", "7 4", firstReplyHistogram),
        ]
        var points: [(color: String, dash: String, line: [(Double, Double)])] = []
        var maxX = 2.0, minY = Double.infinity, maxY = 0.0
        for (_, color, dash, histogram) in series where histogram.totalCount > 0 {
            var line: [(Double, Double)] = []
            for value in histogram.percentiles(ticksPerHalfDistance: 5) {
                let p = min(value.percentileLevelIteratedTo, 99.9999) / 100
                let x = log10(1 / (1 - p))
                let y = max(Double(value.value), 1) / 1000  // ms
                line.append((x, y))
                maxX = max(maxX, x)
                minY = min(minY, y)
                maxY = max(maxY, y)
            }
            points.append((color, dash, line))
        }
        guard !points.isEmpty else { return "<p>No replies were measured.</p>\n" }
        let logMin = floor(log10(minY)), logMax = max(ceil(log10(maxY)), logMin + 1)
        maxX = min(ceil(maxX), 6)
        func sx(_ x: Double) -> Double { left + min(x, maxX) / maxX * (width - left - right) }
        func sy(_ y: Double) -> Double {
            top + (1 - (log10(y) - logMin) / (logMax - logMin)) * (height - top - bottom)
        }
        var svg =
            "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
        for decade in Int(logMin)...Int(logMax) {
            let y = sy(pow10(decade))
            svg += line(left, y, width - right, y, "grid")
            svg += text(left - 6, y + 4, Self.milliseconds(pow10(decade)), anchor: "end")
        }
        let labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        for tick in 0...Int(maxX) where tick < labels.count {
            let x = sx(Double(tick))
            svg += line(x, top, x, height - bottom, "grid")
            svg += text(x, height - bottom + 16, labels[tick], anchor: "middle")
        }
        svg += line(left, height - bottom, width - right, height - bottom, "axis")
        svg += line(left, top, left, height - bottom, "axis")
        svg += text((left + width - right) / 2, height - 8, "percentile", anchor: "middle", cssClass: "title")
        svg +=
            "<text class=\"title\" x=\"16\" y=\"\(fmt((top + height - bottom) / 2))\" text-anchor=\"middle\" "
            + "transform=\"rotate(-90 16 \(fmt((top + height - bottom) / 2)))\">latency (ms, log scale)</text>\n"
        for (color, dash, line) in points {
            let path = line.map { "\(fmt(sx($0.0))),\(fmt(sy($0.1)))" }.joined(separator: " ")
            let dashing = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.5\"\(dashing) points=\"\(path)\"/>\n"
        }
        // The legend, in a box of its own at the top left.
        let shown = series.filter { $0.histogram.totalCount > 0 }
        svg +=
            "<rect x=\"\(fmt(left + 8))\" y=\"\(fmt(top + 4))\" width=\"150\" height=\"\(8 + shown.count * 18)\" "
            + "fill=\"#fff\" stroke=\"#ccc\"/>\n"
        for (index, entry) in shown.reversed().enumerated() {
            let y = top + 18 + Double(index) * 18
            let dashing = entry.dash.isEmpty ? "" : " stroke-dasharray=\"\(entry.dash)\""
            svg +=
                "<line x1=\"\(fmt(left + 16))\" y1=\"\(fmt(y - 4))\" x2=\"\(fmt(left + 46))\" y2=\"\(fmt(y - 4))\" "
                + "stroke=\"\(entry.color)\" stroke-width=\"2.5\"\(dashing)/>\n"
            svg += text(left + 54, y, entry.name, anchor: "start")
        }
        return svg + "</svg>\n"
    }

    /// Answered requests per second (bars: throughput in blue, handlers' failures in orange, errors in red, stacked)
    /// and the final-reply p99 per second (line, right axis).
    func timelineChart() -> String {
        guard !timeline.isEmpty else { return "<p>No timeline (the run was shorter than one interval).</p>\n" }
        let width = 900.0, height = 340.0, left = 80.0, right = 80.0, top = 36.0, bottom = 48.0
        let maxRate = Self.niceCeiling(max(Double(timeline.map(\.completed).max() ?? 1), 1) * 1.05)
        let maxP99 = Self.niceCeiling(max(Double(timeline.map(\.finalP99Microseconds).max() ?? 1) / 1000, 0.001) * 1.05)
        let count = Double(timeline.count)
        let barWidth = (width - left - right) / count
        func sx(_ index: Double) -> Double { left + index * barWidth }
        func syRate(_ value: Double) -> Double { top + (1 - value / maxRate) * (height - top - bottom) }
        func syP99(_ value: Double) -> Double { top + (1 - value / maxP99) * (height - top - bottom) }
        var svg =
            "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
        for step in 0...5 {
            let fraction = Double(step) / 5
            let y = top + (1 - fraction) * (height - top - bottom)
            svg += line(left, y, width - right, y, "grid")
            svg += text(left - 6, y + 4, LoadFormat.grouped(Int(maxRate * fraction)), anchor: "end")
            svg += text(width - right + 6, y + 4, Self.milliseconds(maxP99 * fraction), anchor: "start")
        }
        func bar(_ index: Int, _ value: Int, _ color: String) -> String {
            let y = syRate(Double(value))
            return "<rect x=\"\(fmt(sx(Double(index)) + 1))\" y=\"\(fmt(y))\" width=\"\(fmt(max(barWidth - 2, 1)))\" "
                + "height=\"\(fmt(height - bottom - y))\" fill=\"\(color)\"/>\n"
        }
        for (index, point) in timeline.enumerated() {
            svg += bar(index, point.completed, Self.throughputColor)
            if point.failures + point.errors > 0 { svg += bar(index, point.failures + point.errors, Self.failureColor) }
            if point.errors > 0 { svg += bar(index, point.errors, Self.errorColor) }
        }
        let path = timeline.enumerated().map { index, point in
            "\(fmt(sx(Double(index) + 0.5))),\(fmt(syP99(Double(point.finalP99Microseconds) / 1000)))"
        }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"#333\" stroke-width=\"2\" points=\"\(path)\"/>\n"
        let labelStep = max(1, timeline.count / 10)
        for index in stride(from: 0, to: timeline.count, by: labelStep) {
            svg += text(
                sx(Double(index) + 0.5), height - bottom + 16, "\(timeline[index].second + 1)s", anchor: "middle")
        }
        svg += line(left, height - bottom, width - right, height - bottom, "axis")
        svg += line(left, top, left, height - bottom, "axis")
        svg += text(
            (left + width - right) / 2, height - 8, "seconds after the warm-up", anchor: "middle", cssClass: "title")
        svg += text(left, top - 10, "answered requests/s", anchor: "start", cssClass: "title")
        svg += text(width - right, top - 10, "final-reply p99 (ms)", anchor: "end", cssClass: "title")
        // Legend, between the two axis titles.
        var x = left + 170
        for (name, color) in [
            ("throughput", Self.throughputColor), ("handler failures", Self.failureColor), ("errors", Self.errorColor),
        ] {
            svg += "<rect x=\"\(fmt(x))\" y=\"\(fmt(top - 20))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>\n"
            svg += text(x + 16, top - 10, name, anchor: "start")
            x += 34 + Double(name.count) * 6
        }
        svg += line(x, top - 14, x + 24, top - 14, "p99")
        svg += text(x + 28, top - 10, "p99", anchor: "start")
        return svg + "</svg>\n"
    }

    static let throughputColor = "#9cc3f5"
    static let failureColor = "#f0a35e"
    static let errorColor = "#e06666"

    private func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ cssClass: String) -> String {
        "<line class=\"\(cssClass)\" x1=\"\(fmt(x1))\" y1=\"\(fmt(y1))\" x2=\"\(fmt(x2))\" y2=\"\(fmt(y2))\"/>\n"
    }

    private func text(
        _ x: Double, _ y: Double, _ content: String, anchor: String, cssClass: String? = nil
    ) -> String {
        let css = cssClass.map { " class=\"\($0)\"" } ?? ""
        return "<text\(css) x=\"\(fmt(x))\" y=\"\(fmt(y))\" text-anchor=\"\(anchor)\">\(Self.escape(content))</text>\n"
    }

    private func fmt(_ value: Double) -> String { LoadFormat.fixed(value, 1) }

    /// Milliseconds for axes (`250 ms`, `2.5 ms`, `0.120 ms`), or, without the unit, for table cells with three
    /// significant digits (`4.51`, `22.1`, `0.120`).
    static func milliseconds(_ value: Double, unit: Bool = true) -> String {
        guard unit else {
            let places = value >= 100 || value == 0 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3
            return LoadFormat.fixed(value, places)
        }
        let number =
            value >= 1 || value == 0 ? LoadFormat.fixed(value, value >= 10 ? 0 : 1) : LoadFormat.fixed(value, 3)
        return number + " ms"
    }

    /// The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `value`, for an axis' top.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        let power = pow(10, floor(log10(value)))
        for step in [1, 2, 2.5, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }
}

private func pow10(_ exponent: Int) -> Double { pow(10, Double(exponent)) }
