/// Parses durations written on the command line: `10s`, `500ms`, `250us`, `2m`, `1.5s`, or a bare number of
/// seconds.
public enum LoadDuration {
    /// The duration `text` names, or nil when it is not a non-negative number with a known unit.
    public static func parse(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
        ]
        let trimmed = text.trimmingSpaces
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            let number = trimmed.dropLast(unit.suffix.count)
            // "ms" also ends in "s", "us" is tried before "s": only accept a pure number before the suffix.
            guard let value = Double(number), value >= 0, value.isFinite else { continue }
            guard value * unit.nanoseconds < 9.2e18 else { return nil }  // beyond Int64 nanoseconds (292 years)
            return .nanoseconds(Int64(value * unit.nanoseconds))
        }
        if let seconds = Double(trimmed), seconds >= 0, seconds.isFinite, seconds * 1e9 < 9.2e18 {
            return .nanoseconds(Int64(seconds * 1e9))
        }
        return nil
    }
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
    }
}
