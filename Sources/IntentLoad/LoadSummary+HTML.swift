import Foundation
import Histogram

extension LoadSummary {
    /// A self-contained HTML report (inline SVG, no scripts or network): the figures, the latency distribution
    /// of the first and final reply by percentile, and throughput and p99 over time.
    public var html: String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Concierge load report</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 980px; }
            table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 10px; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f4f4f4; }
            svg { background: #fff; border: 1px solid #ddd; margin: 0.5em 0 1.5em; }
            .axis { stroke: #888; } .grid { stroke: #eee; } text { font-size: 11px; fill: #444; }
            </style></head><body>
            <h1>Concierge load report</h1>

            """
        page += "<pre>\(Self.escape(table))</pre>\n"
        page += "<h2>Latency by percentile</h2>\n"
        page += percentileChart()
        page += "<h2>Throughput and p99 over time</h2>\n"
        page += timelineChart()
        page += "</body></html>\n"
        return page
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

    /// Latency (ms, log scale) against percentile on the usual 1/(1-p) axis (50%, 90%, 99%, ... 99.999%).
    func percentileChart() -> String {
        let width = 900.0, height = 360.0, left = 70.0, right = 20.0, top = 20.0, bottom = 40.0
        let series: [(String, String, Histogram<UInt64>)] = [
            ("first reply", "#d9822b", firstReplyHistogram), ("final reply", "#2b6cd9", finalReplyHistogram),
        ]
        var points: [(String, [(Double, Double)])] = []
        var maxX = 2.0, minY = Double.infinity, maxY = 0.0
        for (_, color, histogram) in series where histogram.totalCount > 0 {
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
            points.append((color, line))
        }
        guard !points.isEmpty else { return "<p>No replies were measured.</p>\n" }
        let logMin = floor(log10(minY)), logMax = max(ceil(log10(maxY)), logMin + 1)
        maxX = ceil(maxX)
        func sx(_ x: Double) -> Double { left + x / maxX * (width - left - right) }
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
        svg += text(width / 2, height - 6, "percentile", anchor: "middle")
        for (color, line) in points {
            let path = line.map { "\(fmt(sx($0.0))),\(fmt(sy($0.1)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
        }
        for (index, (name, color, histogram)) in series.enumerated() where histogram.totalCount > 0 {
            let y = top + 14 + Double(index) * 16
            svg += "<rect x=\"\(fmt(left + 12))\" y=\"\(fmt(y - 9))\" width=\"12\" height=\"4\" fill=\"\(color)\"/>"
            svg += text(left + 30, y - 4, "\(name) (ms)", anchor: "start")
        }
        return svg + "</svg>\n"
    }

    /// Completed requests per second (bars) and the final-reply p99 per second (line, right axis).
    func timelineChart() -> String {
        guard !timeline.isEmpty else { return "<p>No timeline (the run was shorter than one interval).</p>\n" }
        let width = 900.0, height = 320.0, left = 70.0, right = 70.0, top = 20.0, bottom = 40.0
        let maxRate = max(Double(timeline.map(\.completed).max() ?? 1), 1) * 1.1
        let maxP99 = max(Double(timeline.map(\.finalP99Microseconds).max() ?? 1) / 1000, 0.001) * 1.1
        let count = Double(timeline.count)
        let barWidth = (width - left - right) / count
        func sx(_ index: Double) -> Double { left + index * barWidth }
        func syRate(_ value: Double) -> Double { top + (1 - value / maxRate) * (height - top - bottom) }
        func syP99(_ value: Double) -> Double { top + (1 - value / maxP99) * (height - top - bottom) }
        var svg =
            "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
        for step in 0...4 {
            let fraction = Double(step) / 4
            let y = top + (1 - fraction) * (height - top - bottom)
            svg += line(left, y, width - right, y, "grid")
            svg += text(left - 6, y + 4, LoadFormat.grouped(Int(maxRate * fraction)), anchor: "end")
            svg += text(width - right + 6, y + 4, Self.milliseconds(maxP99 * fraction), anchor: "start")
        }
        for (index, point) in timeline.enumerated() {
            let y = syRate(Double(point.completed))
            svg +=
                "<rect x=\"\(fmt(sx(Double(index)) + 1))\" y=\"\(fmt(y))\" width=\"\(fmt(max(barWidth - 2, 1)))\" "
                + "height=\"\(fmt(height - bottom - y))\" fill=\"#9cc3f5\"/>\n"
            if point.errors > 0 {
                let errorY = syRate(Double(point.errors))
                svg +=
                    "<rect x=\"\(fmt(sx(Double(index)) + 1))\" y=\"\(fmt(errorY))\" "
                    + "width=\"\(fmt(max(barWidth - 2, 1)))\" height=\"\(fmt(height - bottom - errorY))\" fill=\"#e06666\"/>\n"
            }
        }
        let path = timeline.enumerated().map { index, point in
            "\(fmt(sx(Double(index) + 0.5))),\(fmt(syP99(Double(point.finalP99Microseconds) / 1000)))"
        }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"#d9822b\" stroke-width=\"2\" points=\"\(path)\"/>\n"
        let labelStep = max(1, timeline.count / 10)
        for index in stride(from: 0, to: timeline.count, by: labelStep) {
            svg += text(
                sx(Double(index) + 0.5), height - bottom + 16, "\(timeline[index].second + 1)s", anchor: "middle")
        }
        svg += line(left, height - bottom, width - right, height - bottom, "axis")
        svg += text(left, top - 6, "completed/s (errors in red)", anchor: "start")
        svg += text(width - right, top - 6, "final-reply p99", anchor: "end")
        return svg + "</svg>\n"
    }

    private func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ cssClass: String) -> String {
        "<line class=\"\(cssClass)\" x1=\"\(fmt(x1))\" y1=\"\(fmt(y1))\" x2=\"\(fmt(x2))\" y2=\"\(fmt(y2))\"/>\n"
    }

    private func text(_ x: Double, _ y: Double, _ content: String, anchor: String) -> String {
        "<text x=\"\(fmt(x))\" y=\"\(fmt(y))\" text-anchor=\"\(anchor)\">\(Self.escape(content))</text>\n"
    }

    private func fmt(_ value: Double) -> String { LoadFormat.fixed(value, 1) }

    static func milliseconds(_ value: Double) -> String {
        value >= 1 || value == 0
            ? "\(LoadFormat.fixed(value, value >= 10 ? 0 : 1)) ms" : "\(LoadFormat.fixed(value, 3)) ms"
    }
}

private func pow10(_ exponent: Int) -> Double { pow(10, Double(exponent)) }
