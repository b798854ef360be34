/// One scrape of a Prometheus text exposition (format 0.0.4): its samples, by metric name and labels.
///
/// Only what `concierge top` needs: `# HELP` and `# TYPE` lines and other comments are skipped (a sample's name says
/// what it is: `_bucket`, `_sum`, `_count` for histograms), timestamps are ignored, and a malformed line is skipped
/// rather than failing the whole scrape (``MetricsScrape/skippedLines`` counts them).
public struct MetricsScrape: Sendable, Equatable {
    /// One sample: `name{label="value",...} value`.
    public struct Sample: Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double

        public init(name: String, labels: [String: String] = [:], value: Double) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    public private(set) var samples: [Sample] = []
    /// Lines that were neither a comment, blank, nor a well-formed sample.
    public private(set) var skippedLines = 0
    private var indexByName: [String: [Int]] = [:]

    public init(samples: [Sample]) {
        for sample in samples { append(sample) }
    }

    /// Parses the text of a `/metrics` answer.
    public init(parsing text: String) {
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if let sample = Self.parseSample(Substring(trimmed)) {
                append(sample)
            } else {
                skippedLines += 1
            }
        }
    }

    private mutating func append(_ sample: Sample) {
        indexByName[sample.name, default: []].append(samples.count)
        samples.append(sample)
    }

    /// Every sample named `name`.
    public func samples(named name: String) -> [Sample] {
        (indexByName[name] ?? []).map { samples[$0] }
    }

    /// The value of the sample named `name` whose labels include every one of `labels` (the first such sample), or
    /// nil when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples(named: name).first { sample in labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value
    }

    /// The sum of the samples named `name` whose labels include every one of `labels` (0 when there is none).
    public func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples(named: name).filter { sample in labels.allSatisfy { sample.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// Whether any sample is named `name`.
    public func contains(_ name: String) -> Bool { indexByName[name] != nil }

    // MARK: Parsing

    static func parseSample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }
        guard let first = name.first, !first.isNumber else { return nil }
        rest = rest[name.endIndex...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            guard let parsed = parseLabels(&rest) else { return nil }
            labels = parsed
        }
        let fields = rest.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard (1...2).contains(fields.count), let value = parseValue(fields[0]) else { return nil }
        if fields.count == 2 && Int64(fields[1]) == nil { return nil }  // a timestamp, in milliseconds
        return Sample(name: String(name), labels: labels, value: value)
    }

    /// Parses `name="value",...}` (after the `{`), leaving `text` after the `}`.
    private static func parseLabels(_ text: inout Substring) -> [String: String]? {
        var labels: [String: String] = [:]
        while true {
            text = text.drop { $0 == " " || $0 == "," }
            if text.first == "}" {
                text = text.dropFirst()
                return labels
            }
            let name = text.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            guard !name.isEmpty else { return nil }
            text = text[name.endIndex...].drop { $0 == " " }
            guard text.first == "=" else { return nil }
            text = text.dropFirst().drop { $0 == " " }
            guard text.first == "\"" else { return nil }
            text = text.dropFirst()
            var value = ""
            var closed = false
            while let character = text.first {
                text = text.dropFirst()
                if character == "\"" {
                    closed = true
                    break
                }
                if character == "\\" {
                    guard let escaped = text.first else { return nil }
                    text = text.dropFirst()
                    switch escaped {
                    case "n": value.append("\n")
                    case "\\": value.append("\\")
                    case "\"": value.append("\"")
                    default: value.append("\\"); value.append(escaped)
                    }
                } else {
                    value.append(character)
                }
            }
            guard closed else { return nil }
            labels[String(name)] = value
        }
    }

    /// A sample value: a Go float (`1`, `-2.5e-3`), `+Inf`, `-Inf` or `NaN`.
    static func parseValue(_ text: Substring) -> Double? {
        switch text {
        case "+Inf", "Inf", "+inf", "inf": return .infinity
        case "-Inf", "-inf": return -.infinity
        case "NaN", "nan": return .nan
        default: return Double(text)
        }
    }

    public static func == (lhs: MetricsScrape, rhs: MetricsScrape) -> Bool {
        lhs.samples.count == rhs.samples.count
            && zip(lhs.samples, rhs.samples).allSatisfy { left, right in
                left.name == right.name && left.labels == right.labels
                    && (left.value == right.value || (left.value.isNaN && right.value.isNaN))
            }
    }
}
