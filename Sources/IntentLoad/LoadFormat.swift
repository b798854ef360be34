/// Small number formatting for the load reports (no Foundation).
enum LoadFormat {
    /// 1234567 -> "1,234,567".
    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// A latency in µs for people: "850 µs", "1.25 ms", "2.10 s".
    static func microseconds(_ value: UInt64) -> String {
        if value < 1000 { return "\(value) µs" }
        if value < 1_000_000 { return "\(fixed(Double(value) / 1000, 2)) ms" }
        return "\(fixed(Double(value) / 1_000_000, 2)) s"
    }

    /// `value` with `places` decimals.
    static func fixed(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var text = String(whole)
        if places > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: places - digits.count) + digits
        }
        return value < 0 && scaled > 0 ? "-" + text : text
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
