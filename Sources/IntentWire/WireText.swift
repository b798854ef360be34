/// Checks and renders the text frames of CIP (intent types, worker names, command words).
public enum WireText {
    /// Whether `bytes` are well-formed UTF-8 (Unicode table 3-7: no overlong forms, no encoded surrogates, nothing
    /// above U+10FFFF, no stray or missing continuation bytes). Allocates nothing; ASCII takes a fast path.
    public static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let trailing: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: trailing = 1
            case 0xE0:
                trailing = 2
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: trailing = 2
            case 0xED:
                trailing = 2
                high = 0x9F
            case 0xF0:
                trailing = 3
                low = 0x90
            case 0xF1...0xF3: trailing = 3
            case 0xF4:
                trailing = 3
                high = 0x8F
            default: return false
            }
            guard index + trailing < count else { return false }
            let second = bytes[index + 1]
            guard second >= low, second <= high else { return false }
            if trailing >= 2 {
                guard bytes[index + 2] & 0xC0 == 0x80 else { return false }
            }
            if trailing == 3 {
                guard bytes[index + 3] & 0xC0 == 0x80 else { return false }
            }
            index += trailing + 1
        }
        return true
    }

    /// `bytes` as text for an error message or a log: invalid UTF-8 repaired, and cut to `limit` bytes (then
    /// followed by "...") so that a huge frame does not make a huge error body.
    public static func display(_ bytes: UnsafeRawBufferPointer, limit: Int = 64) -> String {
        if bytes.count <= limit { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<limit]), as: UTF8.self) + "..."
    }
}
