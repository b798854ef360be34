/// What `concierge top` draws in one frame, as plain lines (no escape codes) that fit a terminal of a given size:
/// a pure function of the scrapes, so tests check it without a terminal.
public struct TopScreen: Sendable {
    /// What the command learnt in this refresh.
    public struct State: Sendable {
        /// The broker's HTTP address as the user gave it.
        public var target: String
        /// The wall-clock time of this frame, as shown (e.g. `23:10:05 UTC`).
        public var clock: String
        /// The refresh interval in seconds.
        public var interval: Double
        /// `/metrics` now; nil when the broker did not answer (see ``failure``).
        public var current: MetricsScrape?
        /// The previous successful scrape, `elapsed` seconds before ``current``.
        public var previous: MetricsScrape?
        public var elapsed: Double
        /// `/readyz`: whether it answered 200, and its line; nil when it did not answer.
        public var ready: (isReady: Bool, detail: String)?
        /// Why the broker is unreachable (when ``current`` is nil).
        public var failure: String?
        /// Seconds since the last successful scrape, nil if there never was one.
        public var secondsSinceLastAnswer: Double?

        public init(
            target: String, clock: String, interval: Double, current: MetricsScrape?, previous: MetricsScrape?,
            elapsed: Double, ready: (isReady: Bool, detail: String)?, failure: String? = nil,
            secondsSinceLastAnswer: Double? = nil
        ) {
            self.target = target
            self.clock = clock
            self.interval = interval
            self.current = current
            self.previous = previous
            self.elapsed = elapsed
            self.ready = ready
            self.failure = failure
            self.secondsSinceLastAnswer = secondsSinceLastAnswer
        }
    }

    /// The lines of one frame, each at most `width` characters, at most `height` lines (tables are cut, saying how
    /// many rows were left out, when the terminal is too short).
    public static func render(_ state: State, width: Int, height: Int) -> [String] {
        let width = max(width, 20)
        let height = max(height, 3)
        var header = [
            "concierge top  \(state.target)  \(state.clock)  every \(Format.duration(state.interval))"
        ]
        guard let current = state.current else {
            let since =
                state.secondsSinceLastAnswer.map { "last answer \(Format.duration($0)) ago" } ?? "never answered"
            header.append("UNREACHABLE  \(state.failure ?? "no answer")")
            header.append("retrying every \(Format.duration(state.interval)); \(since)")
            return fit(header, width: width, height: height)
        }
        let figures = TopFigures(previous: state.previous, current: current, elapsed: state.elapsed)
        switch state.ready {
        case .some((true, let detail)): header.append("READY  \(detail)")
        case .some((false, let detail)): header.append("NOT READY  \(detail)")
        case .none: header.append("READINESS UNKNOWN  /readyz did not answer")
        }
        // Two lines, so that each fits 80 columns.
        header.append(
            "in flight \(Format.count(figures.requestsInFlight))  queued \(Format.count(figures.requestsQueued))  "
                + "capacity \(Format.count(figures.capacityUsed))/"
                + "\(Format.count(total(figures.capacityUsed, figures.capacityFree))) used")
        header.append(
            "workers \(Format.count(figures.workersReady)) ready, \(Format.count(figures.workersDraining)) draining, "
                + "\(Format.count(figures.workersBlocked)) blocked")
        let window = figures.elapsed.map { "last \(Format.duration($0))" } ?? "waiting for a second scrape"
        header.append(
            "first reply p99 \(Format.duration(figures.firstReplyP99))  final reply p99 "
                + "\(Format.duration(figures.finalReplyP99))  (\(window))")
        var totals =
            "since start: \(Format.count(figures.totalFinals)) final, \(Format.count(figures.totalBusy)) busy, "
            + "\(Format.count(figures.totalErrors)) other errors"
        if let timeouts = figures.totalTimeouts { totals += ", \(Format.count(timeouts)) timeouts" }
        if let lost = figures.totalWorkersLost { totals += ", \(Format.count(lost)) workers lost" }
        header.append(totals)
        if let open = figures.conversationsOpen, open > 0 || figures.conversationsStarted > 0 {
            var line = "conversations \(Format.count(open)) open, \(Format.count(figures.conversationsStarted)) started"
            let endings = figures.conversationEndings.map { "\(Format.count($0.count)) \($0.name)" }
            if !endings.isEmpty { line += ": " + endings.joined(separator: ", ") }
            if let turns = figures.turnsPerConversation {
                line += "  \(Format.decimal(turns, places: 1)) turns each"
            }
            header.append(line)
            if !figures.mostAsked.isEmpty {
                header.append(
                    "most asked: "
                        + figures.mostAsked.map { "\($0.name) \(Format.count($0.count))" }.joined(
                            separator: ", "))
            }
        }
        if figures.hasJournal {
            let availability =
                switch figures.journalAvailable {
                case .some(let value) where value > 0: "available"
                case .some: "UNAVAILABLE"
                case .none: "-"
                }
            header.append(
                "journal \(availability)  commit p99 \(Format.duration(figures.journalCommitP99)) (\(window))")
        }

        // Narrow enough that every column fits an 80-column terminal beside a name of up to 14 characters.
        let intentColumns: [Column] = [
            Column("QUEUE", 5), Column("OLDEST", 6), Column("FINAL/s", 7), Column("BUSY/s", 6), Column("ERR/s", 6),
            Column("RUN p99", 7), Column("FINAL", 7), Column("BUSY", 6), Column("ERRORS", 6),
        ]
        // Named types by name, then the requests without one.
        let intents = figures.intents.filter { !$0.name.isEmpty } + figures.intents.filter { $0.name.isEmpty }
        let intentRows = intents.map { intent in
            (
                intent.name.isEmpty ? Self.unknownTypeName : intent.name,
                [
                    Format.count(intent.queueDepth), Format.duration(intent.oldestAgeSeconds),
                    Format.rate(intent.finalRate), Format.rate(intent.busyRate), Format.rate(intent.errorRate),
                    Format.duration(intent.handlerP99), Format.count(intent.finals), Format.count(intent.busy),
                    Format.count(intent.errors),
                ]
            )
        }
        let workerColumns: [Column] = [Column("JOBS/SLOTS", 11), Column("JOBS/s", 7), Column("JOBS", 7)]
        let workerRows = figures.workers.map { worker in
            (
                worker.name,
                [
                    "\(Format.count(worker.jobs))/\(Format.count(worker.slots))", Format.rate(worker.jobRate),
                    Format.count(worker.jobsTotal),
                ]
            )
        }
        // Rows that fit: header, blank, intent title, blank, worker title; the rest is shared by the two tables.
        let fixed = header.count + 4
        var intentBudget = intentRows.count
        var workerBudget = workerRows.count
        while fixed + max(intentBudget, 1) + max(workerBudget, 1) > height && (intentBudget > 1 || workerBudget > 1) {
            if workerBudget >= intentBudget { workerBudget -= 1 } else { intentBudget -= 1 }
        }
        var lines = header
        lines.append("")
        lines += table(
            "INTENT", intentColumns, intentRows, budget: intentBudget, width: width, empty: "no intent types")
        lines.append("")
        lines += table("WORKER", workerColumns, workerRows, budget: workerBudget, width: width, empty: "no workers")
        return fit(lines, width: width, height: height)
    }

    /// The row of requests the broker counted without an intent type (`intent=""`: a type no worker serves past the
    /// startup grace, answered `unknown-intent`, or a request too malformed to have one).
    public static let unknownTypeName = "(unknown type)"

    private static func total(_ used: Double?, _ free: Double?) -> Double? {
        guard let used, let free else { return nil }
        return used + free
    }

    struct Column {
        var title: String
        var width: Int
        init(_ title: String, _ width: Int) {
            self.title = title
            self.width = width
        }
    }

    /// A table with a name column taking the width the numbers leave (8 to 40 characters), numbers right-aligned
    /// (columns that do not fit are left out, from the right); rows beyond `budget` become one "… N more" line.
    static func table(
        _ title: String, _ columns: [Column], _ rows: [(String, [String])], budget: Int, width: Int, empty: String
    ) -> [String] {
        // Columns that do not fit beside an 8-character name are left out, from the right.
        var columns = columns
        while columns.count > 1 && 8 + columns.reduce(0, { $0 + $1.width + 1 }) > width { columns.removeLast() }
        let numbers = columns.reduce(0) { $0 + $1.width + 1 }
        let longest = rows.map { $0.0.count }.max() ?? 0
        let nameWidth = min(max(8, min(longest, width - numbers)), 40)
        func line(_ name: String, _ cells: [String]) -> String {
            var text = Format.pad(Format.cut(name, nameWidth), nameWidth)
            for (column, cell) in zip(columns, cells) {
                text += " " + Format.padLeft(Format.cut(cell, column.width), column.width)
            }
            return text
        }
        var lines = [line(title, columns.map(\.title))]
        if rows.isEmpty { return lines + ["(\(empty))"] }
        if rows.count <= budget {
            lines += rows.map { line($0.0, $0.1) }
        } else {
            let shown = max(budget - 1, 0)
            lines += rows.prefix(shown).map { line($0.0, $0.1) }
            lines.append("… \(rows.count - shown) more")
        }
        return lines
    }

    /// Cuts every line to `width` characters and the whole to `height` lines.
    static func fit(_ lines: [String], width: Int, height: Int) -> [String] {
        lines.prefix(height).map { Format.cut($0, width) }
    }
}

/// How `concierge top` writes numbers: short, with units people read at a glance.
public enum Format {
    /// A count or gauge, rounded to a whole number (`-` when absent).
    public static func count(_ value: Double?) -> String {
        guard let value else { return "-" }
        guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf") }
        return String(Int64(value.rounded()))
    }

    /// A rate per second: one decimal below 100, whole above (`-` when absent).
    public static func rate(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "-" }
        return value < 100 ? decimal(value, places: 1) : String(Int64(value.rounded()))
    }

    /// Seconds as `0s`, `850µs`, `12.5ms`, `250ms`, `1.25s`, `12.5s`, `2m03s` (`-` when absent): always with a unit.
    public static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "-" }
        if seconds <= 0 { return "0s" }
        if seconds < 0.001 { return "\(Int64((seconds * 1e6).rounded()))µs" }
        if seconds < 0.1 { return decimal(seconds * 1e3, places: 1) + "ms" }
        if seconds < 1 { return "\(Int64((seconds * 1e3).rounded()))ms" }
        if seconds < 10 { return decimal(seconds, places: 2) + "s" }
        if seconds < 60 { return decimal(seconds, places: 1) + "s" }
        let whole = Int64(seconds.rounded())
        let secondsPart = whole % 60
        return "\(whole / 60)m" + (secondsPart < 10 ? "0" : "") + "\(secondsPart)s"
    }

    /// `value` with `places` decimals (no Foundation).
    static func decimal(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < places { fraction = "0" + fraction }
        return (value < 0 && scaled != 0 ? "-" : "") + "\(whole)" + (places > 0 ? ".\(fraction)" : "")
    }

    static func cut(_ text: String, _ width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.prefix(width)) }
        return String(text.prefix(width - 1)) + "…"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
