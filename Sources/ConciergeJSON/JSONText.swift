/// The one JSON string escaper and the one UTF-8 validator of Concierge, for code that writes or checks JSON text
/// without building a ``JSONValue`` (the broker's error and progress bodies, the protocol's text frames).
///
/// ``JSONValue``'s serializer and parser use these same functions, so every JSON string Concierge writes is
/// escaped the same way and every byte string it accepts passes the same UTF-8 check.
public enum JSONText {
    /// Appends `value` as a JSON string literal: quoted, with `"`, `\` and the control characters escaped
    /// minimally (`\n`, `\r`, `\t`, `\b`, `\f`, and `\u00XX` for the others); everything else, including
    /// non-ASCII text, is copied as UTF-8.
    public static func appendString(_ value: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        if value.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &buffer) }) == nil {
            var copy = value
            copy.withUTF8 { appendEscaped($0, to: &buffer) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Whether `bytes` are well-formed UTF-8 (Unicode Table 3-7: no stray or missing continuation bytes, no
    /// overlong forms, no encoded surrogates, nothing above U+10FFFF). Allocates nothing; ASCII takes a fast path.
    public static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            if base[index] < 0x80 {
                index += 1
                continue
            }
            let length = utf8SequenceLength(base, at: index, count: count)
            guard length > 0 else { return false }
            index += length
        }
        return true
    }

    /// The length of the well-formed multi-byte UTF-8 sequence whose lead byte (>= 0x80) is at `index`, or 0 when
    /// the sequence is not well-formed (Unicode Table 3-7: rejects stray continuation bytes, overlongs (C0, C1,
    /// E0 80-9F, F0 80-8F), UTF-8-encoded surrogates (ED A0-BF), code points above U+10FFFF (F4 90+, F5-FF) and
    /// truncated sequences).
    @inline(__always)
    static func utf8SequenceLength(_ bytes: UnsafePointer<UInt8>, at index: Int, count: Int) -> Int {
        let trailing: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch bytes[index] {
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
        default: return 0
        }
        guard index + trailing < count else { return 0 }
        let second = bytes[index + 1]
        guard second >= low && second <= high else { return 0 }
        if trailing >= 2 {
            guard bytes[index + 2] & 0xC0 == 0x80 else { return 0 }
            if trailing == 3 {
                guard bytes[index + 3] & 0xC0 == 0x80 else { return 0 }
            }
        }
        return trailing + 1
    }

    /// Appends `utf8` with `"`, `\` and control characters escaped, copying unescaped runs in bulk.
    static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var runStart = 0
        var position = 0
        while true {
            position = nextByteNeedingEscape(base, from: position, count: count)
            guard position < count else { break }
            let byte = base[position]
            if position > runStart {
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: position - runStart))
            }
            position += 1
            runStart = position
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            default:
                let hexDigits: StaticString = "0123456789abcdef"
                JSONWriter.appendStatic("u00", to: &buffer)
                hexDigits.withUTF8Buffer { hex in
                    buffer.append(hex[Int(byte >> 4)])
                    buffer.append(hex[Int(byte & 0x0F)])
                }
            }
        }
        if count > runStart {
            buffer.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
        }
    }

    /// The position of the first byte at or after `position` that must be escaped (`"`, `\`, < 0x20),
    /// or `count`. Checks eight bytes at a time.
    @inline(__always)
    static func nextByteNeedingEscape(_ base: UnsafePointer<UInt8>, from position: Int, count: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var position = position
        while position &+ 8 <= count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            let quoteBytes = word ^ (ones &* 0x22)
            let backslashBytes = word ^ (ones &* 0x5C)
            // Bytes >= 0x80 (`word` high bit) are excluded: they never need escaping.
            let special =
                ((quoteBytes &- ones) & ~quoteBytes
                    | (backslashBytes &- ones) & ~backslashBytes
                    | (word &- ones &* 0x20) & ~word) & ~word & highBits
            if special != 0 {
                return position &+ (special.trailingZeroBitCount >> 3)
            }
            position &+= 8
        }
        while position < count {
            let byte = base[position]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return position }
            position &+= 1
        }
        return count
    }
}
