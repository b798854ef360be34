/// A small, locale-free ISO 8601 date-time codec (UTC output), so no Foundation formatter sits on the JSON path.
enum _ISO8601 {
    /// Seconds since 1970 for `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, or nil.
    static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in i..<(i + count) {
                let d = Int(b[k]) - 48
                guard d >= 0, d <= 9 else { return nil }
                value = value * 10 + d
            }
            i += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t")
        else { return nil }
        i += 1
        guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2) else {
            return nil
        }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(":"), let om = digits(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Double(seconds) + fraction
    }

    /// `YYYY-MM-DDTHH:MM:SS[.mmm]Z` in UTC.
    static func format(_ interval: Double) -> String {
        let whole = interval.rounded(.down)
        var millis = Int(((interval - whole) * 1000).rounded())
        var total = Int(whole)
        if millis == 1000 {
            total += 1
            millis = 0
        }
        var days = total / 86400
        var rest = total % 86400
        if rest < 0 {
            rest += 86400
            days -= 1
        }
        let (year, month, day) = civilFromDays(days)
        var out = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        out += pad(rest / 3600, 2) + ":" + pad(rest % 3600 / 60, 2) + ":" + pad(rest % 60, 2)
        if millis != 0 { out += "." + pad(millis, 3) }
        return out + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
