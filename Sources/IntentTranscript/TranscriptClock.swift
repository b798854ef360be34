#if canImport(Glibc)
    import Glibc
#endif

/// The wall-clock times of transcripts: UTC ISO 8601 with milliseconds, `2026-11-28T12:00:00.000Z` (no Foundation:
/// the broker writes transcripts and links no Foundation).
public enum TranscriptClock {
    /// Now, as a transcript writes it.
    public static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return timestamp(secondsSinceEpoch: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }

    /// The time `secondsSinceEpoch` (UTC) plus `milliseconds` (0-999), as a transcript writes it.
    public static func timestamp(secondsSinceEpoch: Int, milliseconds: Int) -> String {
        var seconds = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(min(999, max(0, milliseconds))), 3))Z"
    }

    /// Whether `text` has the shape of a transcript time: `YYYY-MM-DDTHH:MM:SS.mmmZ`, each field in its range.
    public static func isTimestamp(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 24 else { return false }
        let separators: [Int: UInt8] = [
            4: UInt8(ascii: "-"), 7: UInt8(ascii: "-"), 10: UInt8(ascii: "T"), 13: UInt8(ascii: ":"),
            16: UInt8(ascii: ":"), 19: UInt8(ascii: "."), 23: UInt8(ascii: "Z"),
        ]
        for (index, byte) in bytes.enumerated() {
            if let separator = separators[index] {
                guard byte == separator else { return false }
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                return false
            }
        }
        func number(_ from: Int, _ count: Int) -> Int {
            bytes[from..<(from + count)].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        return (1...12).contains(number(5, 2)) && (1...31).contains(number(8, 2)) && number(11, 2) <= 23
            && number(14, 2) <= 59 && number(17, 2) <= 60
    }
}
