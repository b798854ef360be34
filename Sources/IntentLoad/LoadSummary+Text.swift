extension LoadSummary {
    /// The human-readable report printed at the end of `concierge load`.
    public var table: String {
        var lines: [String] = []
        let shape =
            mode == "closed"
            ? "closed loop, \(concurrency ?? 0) in flight"
            : "open loop, \(LoadFormat.grouped(Int(targetRate ?? 0))) req/s target"
        lines.append(
            "Concierge load: \(shape) over \(connections) connection(s), deadline \(deadlineMilliseconds) ms"
                + (idempotencyKeys ? ", a fresh idempotency key per request" : ""))
        lines.append("workload: \(workload.joined(separator: "; "))")
        lines.append(
            "measured \(LoadFormat.fixed(durationSeconds, 2)) s after a \(LoadFormat.fixed(warmupSeconds, 1)) s warm-up"
        )
        lines.append("")
        lines.append("requests      \(LoadFormat.grouped(requests))")
        lines.append("throughput    \(LoadFormat.grouped(Int(throughputRPS.rounded()))) req/s (final replies)")
        lines.append("answered      \(LoadFormat.grouped(Int(answeredRPS.rounded()))) req/s (final, failure or error)")
        lines.append("offered       \(LoadFormat.grouped(Int(offeredRPS.rounded()))) req/s")
        lines.append("")
        lines.append(
            "latency".rightPadded(14) + ["p50", "p90", "p99", "p99.9", "max"].map { $0.leftPadded(11) }.joined()
        )
        for (name, value) in [("first reply", firstReply), ("final reply", finalReply)] {
            let cells = [value.p50, value.p90, value.p99, value.p999, value.max].map {
                LoadFormat.microseconds($0).leftPadded(11)
            }
            lines.append(name.rightPadded(14) + cells.joined())
        }
        lines.append("")
        lines.append("outcomes")
        for key in outcomes.keys.sorted() {
            lines.append("  " + key.rightPadded(40) + LoadFormat.grouped(outcomes[key]!).leftPadded(12))
        }
        if labels.count > 1 {
            lines.append("")
            // The label column as wide as the longest label, up to 40 characters (longer ones cut with "…").
            let width = min(max(labels.map(\.label.count).max() ?? 0, 5), 40) + 2
            func cut(_ text: String) -> String {
                text.count <= width - 2 ? text : String(text.prefix(width - 3)) + "…"
            }
            lines.append(
                "label".rightPadded(width)
                    + ["requests", "final/s", "failures", "errors", "p50", "p99"].map {
                        $0.leftPadded(11)
                    }.joined())
            for label in labels {
                let cells = [
                    LoadFormat.grouped(label.requests), LoadFormat.grouped(Int(label.throughputRPS.rounded())),
                    LoadFormat.grouped(label.failureReplies), LoadFormat.grouped(label.errorReplies + label.unanswered),
                    LoadFormat.microseconds(label.finalReply.p50), LoadFormat.microseconds(label.finalReply.p99),
                ]
                lines.append(cut(label.label).rightPadded(width) + cells.map { $0.leftPadded(11) }.joined())
            }
        }
        lines.append("")
        lines.append(
            "deadline misses \(deadlineMisses)   errors \(errors)   unanswered \(unanswered)"
                + (failureReplies > 0 ? "   handler failures \(failureReplies) (not counted as throughput)" : ""))
        if clientBacklogMax > 0 {
            lines.append("client backlog: up to \(clientBacklogMax) due requests waited for a free in-flight slot")
        }
        if throttled > 0 {
            lines.append(
                "throttled: \(LoadFormat.grouped(throttled)) requests refused by the client's throttle, never sent")
        }
        if strayReplies > 0 { lines.append("stray replies: \(strayReplies)") }
        return lines.joined(separator: "\n")
    }
}
