extension JSONValue {
    /// Parses one JSON document (RFC 8259, strict) from raw bytes.
    ///
    /// Strictness: only space, tab, CR and LF count as whitespace; numbers follow the RFC grammar exactly
    /// (no leading zeros, `+`, `1.`, `.5`, `NaN`, `Infinity`); strings must be well-formed UTF-8 without
    /// unescaped control characters, escapes must be valid and surrogate escapes correctly paired;
    /// nothing but whitespace may follow the value. Duplicate object keys: the last occurrence wins.
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 encoded document. Only read during the call.
    ///   - maxDepth: The maximum nesting of arrays and objects. `0` allows only scalars, `1` allows
    ///     `[1]` but not `[[1]]`. Parsing recurses once per level, so keep this modest.
    /// - Throws: ``JSONError`` describing the first problem found and its byte offset.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try parseLocating(bytes, maxDepth: maxDepth, member: nil).value
    }

    /// Parses a document and, when `member` is given, finds the byte range of that top-level member's value.
    static func parseLocating(_ bytes: UnsafeRawBufferPointer, maxDepth: Int, member: String?) throws(JSONError) -> (
        value: JSONValue, memberRange: Range<Int>?
    ) {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONError(code: .unexpectedEnd, offset: 0)
        }
        var parser = JSONParser(
            bytes: base.assumingMemoryBound(to: UInt8.self),
            count: bytes.count,
            maxDepth: maxDepth
        )
        parser.locateKey = member
        let value = try parser.parseDocument()
        return (value, parser.locatedRange)
    }

    /// Parses one JSON document (RFC 8259, strict) from a byte array.
    ///
    /// See the `UnsafeRawBufferPointer` overload of `parse(_:maxDepth:)` for the accepted grammar.
    /// - Throws: ``JSONError`` describing the first problem found and its byte offset.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON document (RFC 8259, strict) from the UTF-8 contents of a string.
    ///
    /// See the `UnsafeRawBufferPointer` overload of `parse(_:maxDepth:)` for the accepted grammar.
    /// - Throws: ``JSONError`` describing the first problem found and its UTF-8 byte offset.
    public static func parse(_ string: String, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        var string = string
        let result = string.withUTF8 { utf8 in
            Result { () throws(JSONError) -> JSONValue in try parse(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth) }
        }
        return try result.get()
    }
}

// MARK: - Parser

/// Exact powers of ten representable in a `Double` (10^0 ... 10^22), for the fast number path.
private let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

private enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}

/// A single-use recursive-descent parser over a borrowed byte buffer.
///
/// All reads go through `bytes[index]` after an explicit `index < count` check; strings are created
/// straight from validated byte slices (`String(decoding:as:)`), and only strings containing escapes
/// go through the reusable `scratch` buffer.
struct JSONParser {
    let bytes: UnsafePointer<UInt8>
    let count: Int
    let maxDepth: Int
    var index = 0
    /// Reused buffer for strings that contain escapes.
    var scratch: [UInt8] = []
    /// Members of the objects currently being parsed (innermost last), so each object is built once at its
    /// final size instead of growing.
    var memberStack: [Member] = []
    /// A top-level member whose value's byte range to record in ``locatedRange`` (see
    /// `JSONValue.parse(_:maxDepth:locatingMember:)`).
    var locateKey: String?
    var locatedRange: Range<Int>?

    typealias Member = JSONObject.Member

    init(bytes: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.bytes = bytes
        self.count = count
        self.maxDepth = maxDepth
        memberStack.reserveCapacity(16)  // one allocation covers typical bodies
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < count {
            throw JSONError(code: .trailingData, offset: index)
        }
        return value
    }

    // MARK: Helpers

    @inline(__always)
    func fail(_ code: JSONError.Code, at offset: Int) -> JSONError {
        JSONError(code: code, offset: offset)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            let byte = bytes[index]
            if byte == ASCII.space || byte == ASCII.lineFeed || byte == ASCII.carriageReturn || byte == ASCII.tab {
                index += 1
            } else {
                return
            }
        }
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- ASCII.zero < 10
    }

    // MARK: Values

    /// Parses a value starting at the next non-whitespace byte. `depth` is the number of enclosing
    /// containers.
    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < count else { throw fail(.unexpectedEnd, at: count) }
        switch bytes[index] {
        case ASCII.quote:
            index += 1
            return .string(try parseStringBody())
        case ASCII.openBrace:
            return try parseObject(depth: depth + 1)
        case ASCII.openBracket:
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "t"):
            try expectLiteral(0x74_72_75_65, length: 4)  // "true"
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral(0x66_61_6C_73_65, length: 5)  // "false"
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral(0x6E_75_6C_6C, length: 4)  // "null"
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine:
            return try parseNumber()
        default:
            throw fail(.unexpectedCharacter, at: index)
        }
    }

    /// Matches a literal whose bytes are packed big-endian into `packed` (first byte already known).
    @inline(__always)
    mutating func expectLiteral(_ packed: UInt64, length: Int) throws(JSONError) {
        for offset in 1..<length {
            let position = index + offset
            guard position < count else { throw fail(.unexpectedEnd, at: count) }
            let expected = UInt8(truncatingIfNeeded: packed >> UInt64(8 * (length - 1 - offset)))
            guard bytes[position] == expected else { throw fail(.unexpectedCharacter, at: position) }
        }
        index += length
    }

    mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw fail(.tooDeep, at: index) }
        index += 1  // [
        skipWhitespace()
        guard index < count else { throw fail(.unexpectedEnd, at: count) }
        if bytes[index] == ASCII.closeBracket {
            index += 1
            return .array([])
        }
        var elements: [JSONValue] = []
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < count else { throw fail(.unexpectedEnd, at: count) }
            let byte = bytes[index]
            index += 1
            if byte == ASCII.comma { continue }
            if byte == ASCII.closeBracket {
                return .array(elements)
            }
            throw fail(.unexpectedCharacter, at: index - 1)
        }
    }

    mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw fail(.tooDeep, at: index) }
        index += 1  // {
        skipWhitespace()
        guard index < count else { throw fail(.unexpectedEnd, at: count) }
        if bytes[index] == ASCII.closeBrace {
            index += 1
            return .object(JSONObject())
        }
        // Members are collected on the shared stack so the object is built once at its final size.
        let base = memberStack.count
        while true {
            guard bytes[index] == ASCII.quote else { throw fail(.unexpectedCharacter, at: index) }
            index += 1
            let key = try parseStringBody()
            skipWhitespace()
            guard index < count else { throw fail(.unexpectedEnd, at: count) }
            guard bytes[index] == ASCII.colon else { throw fail(.unexpectedCharacter, at: index) }
            index += 1
            let value: JSONValue
            if depth == 1, let locateKey, key == locateKey {
                skipWhitespace()
                let start = index
                value = try parseValue(depth: depth)
                locatedRange = start..<index  // duplicate keys: the last one, as for the value
            } else {
                value = try parseValue(depth: depth)
            }
            memberStack.append(Member(key: key, value: value))
            skipWhitespace()
            guard index < count else { throw fail(.unexpectedEnd, at: count) }
            let byte = bytes[index]
            index += 1
            if byte == ASCII.closeBrace {
                var members = JSONObject(minimumCapacity: memberStack.count - base)
                for position in base..<memberStack.count {
                    let member = memberStack[position]
                    members[member.key] = member.value  // duplicate keys: last one wins
                }
                memberStack.removeSubrange(base...)
                return .object(members)
            }
            guard byte == ASCII.comma else { throw fail(.unexpectedCharacter, at: index - 1) }
            skipWhitespace()
            guard index < count else { throw fail(.unexpectedEnd, at: count) }
        }
    }

    // MARK: Strings

    /// Parses the rest of a string; `index` is just past the opening quote. Fast path: no escapes, so
    /// the string is created directly from the validated slice.
    mutating func parseStringBody() throws(JSONError) -> String {
        let start = index
        while true {
            skipPlainASCII()
            guard index < count else { break }
            let byte = bytes[index]
            if byte == ASCII.quote {
                let string = String(
                    decoding: UnsafeBufferPointer(start: bytes + start, count: index - start), as: UTF8.self)
                index += 1
                return string
            }
            if byte == ASCII.backslash {
                return try parseEscapedStringBody(start: start)
            }
            if byte < 0x20 {
                throw fail(.invalidString, at: index)
            }
            if byte < 0x80 {
                index += 1
            } else {
                try validateUTF8Sequence()
            }
        }
        throw fail(.unexpectedEnd, at: count)
    }

    /// Advances `index` over bytes that need no attention inside a string (ASCII 0x20...0x7F except
    /// `"` and `\`), eight at a time, stopping at the first byte that does (or near the end of input).
    @inline(__always)
    mutating func skipPlainASCII() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        while index &+ 8 <= count {
            let word = UInt64(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self))
            // Classic SWAR tests; a byte's high bit in `special` is set for the lowest special byte
            // (false positives can only appear above a true one).
            let quoteBytes = word ^ (ones &* UInt64(ASCII.quote))
            let backslashBytes = word ^ (ones &* UInt64(ASCII.backslash))
            let isQuote = (quoteBytes &- ones) & ~quoteBytes
            let isBackslash = (backslashBytes &- ones) & ~backslashBytes
            let isControl = (word &- ones &* 0x20) & ~word
            let special = (isQuote | isBackslash | isControl | word) & highBits
            if special != 0 {
                index &+= special.trailingZeroBitCount >> 3
                return
            }
            index &+= 8
        }
    }

    /// Slow path for strings with escapes: collects the decoded bytes in `scratch`. `index` is at the
    /// first backslash, `start` at the first content byte.
    mutating func parseEscapedStringBody(start: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while true {
            skipPlainASCII()
            guard index < count else { break }
            let byte = bytes[index]
            if byte == ASCII.quote {
                appendRun(from: runStart)
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                appendRun(from: runStart)
                try parseEscape()
                runStart = index
            } else if byte < 0x20 {
                throw fail(.invalidString, at: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                try validateUTF8Sequence()
            }
        }
        throw fail(.unexpectedEnd, at: count)
    }

    @inline(__always)
    mutating func appendRun(from runStart: Int) {
        if index > runStart {
            scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + runStart, count: index - runStart))
        }
    }

    /// Decodes one escape at `index` (a backslash) into `scratch` and moves past it.
    mutating func parseEscape() throws(JSONError) {
        let escapeStart = index
        guard index + 1 < count else { throw fail(.unexpectedEnd, at: count) }
        let decoded: UInt8
        switch bytes[index + 1] {
        case ASCII.quote: decoded = ASCII.quote
        case ASCII.backslash: decoded = ASCII.backslash
        case ASCII.slash: decoded = ASCII.slash
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"):
            index += 2
            try parseUnicodeEscape(escapeStart: escapeStart)
            return
        default:
            throw fail(.invalidEscape, at: escapeStart)
        }
        scratch.append(decoded)
        index += 2
    }

    /// Decodes `XXXX` (and a following `\uXXXX` low surrogate when needed); `index` is at the first hex
    /// digit.
    mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONError) {
        var scalar = try readHex4(escapeStart: escapeStart)
        if scalar >= 0xD800 && scalar <= 0xDBFF {
            // A high surrogate must be immediately followed by an escaped low surrogate.
            guard index + 1 < count, bytes[index] == ASCII.backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail(.invalidEscape, at: escapeStart)
            }
            index += 2
            let low = try readHex4(escapeStart: index - 2)
            guard low >= 0xDC00 && low <= 0xDFFF else { throw fail(.invalidEscape, at: escapeStart) }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
            throw fail(.invalidEscape, at: escapeStart)
        }
        appendUTF8(scalar)
    }

    @inline(__always)
    mutating func readHex4(escapeStart: Int) throws(JSONError) -> UInt32 {
        guard index + 4 <= count else { throw fail(.unexpectedEnd, at: count) }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail(.invalidEscape, at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    @inline(__always)
    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(truncatingIfNeeded: scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }

    /// Validates one multi-byte UTF-8 sequence whose lead byte (>= 0x80) is at `index` and moves past it
    /// (``JSONText/utf8SequenceLength(_:at:count:)``: Unicode Table 3-7).
    @inline(__always)
    mutating func validateUTF8Sequence() throws(JSONError) {
        let length = JSONText.utf8SequenceLength(bytes, at: index, count: count)
        guard length > 0 else { throw fail(.invalidUTF8, at: index) }
        index += length
    }

    // MARK: Numbers

    /// Parses a number at `index` (a `-` or digit). Integers that fit `Int64` become `.int`; others are
    /// converted exactly (Clinger's fast path when the decimal significand and power of ten are both
    /// exact doubles, otherwise the standard library's correctly rounded conversion).
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == ASCII.minus {
            negative = true
            index += 1
            guard index < count else { throw fail(.invalidNumber, at: count) }
        }
        var significand: UInt64 = 0
        var significandOverflowed = false
        var exponent = 0
        var isInteger = true

        @inline(__always)
        func accumulate(_ digit: UInt8) {
            guard !significandOverflowed else { return }
            let (times10, overflow1) = significand.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            if overflow1 || overflow2 {
                significandOverflowed = true
            } else {
                significand = sum
            }
        }

        // Integer part.
        let first = bytes[index]
        if first == ASCII.zero {
            index += 1
            if index < count && Self.isDigit(bytes[index]) {
                throw fail(.invalidNumber, at: index)  // leading zero
            }
        } else if Self.isDigit(first) {
            while index < count {
                let digit = bytes[index] &- ASCII.zero
                guard digit < 10 else { break }
                accumulate(digit)
                index += 1
            }
        } else {
            throw fail(.invalidNumber, at: index)
        }

        // Fraction.
        if index < count && bytes[index] == ASCII.dot {
            isInteger = false
            index += 1
            guard index < count && Self.isDigit(bytes[index]) else { throw fail(.invalidNumber, at: index) }
            while index < count {
                let digit = bytes[index] &- ASCII.zero
                guard digit < 10 else { break }
                accumulate(digit)
                exponent -= 1
                index += 1
            }
        }

        // Exponent.
        if index < count && (bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE) {
            isInteger = false
            index += 1
            var exponentNegative = false
            if index < count && (bytes[index] == ASCII.plus || bytes[index] == ASCII.minus) {
                exponentNegative = bytes[index] == ASCII.minus
                index += 1
            }
            guard index < count && Self.isDigit(bytes[index]) else { throw fail(.invalidNumber, at: index) }
            var written = 0
            while index < count {
                let digit = bytes[index] &- ASCII.zero
                guard digit < 10 else { break }
                if written < 100_000 { written = written * 10 + Int(digit) }  // clamp; only the slow path sees it
                index += 1
            }
            exponent += exponentNegative ? -written : written
        }

        if isInteger && !significandOverflowed {
            if negative {
                if significand <= UInt64(Int64.max) {
                    return .int(-Int64(significand))
                }
                if significand == UInt64(Int64.max) + 1 {
                    return .int(.min)
                }
            } else if significand <= UInt64(Int64.max) {
                return .int(Int64(significand))
            }
        }

        // Clinger's fast path: both operands exact, so one IEEE operation rounds correctly.
        if !significandOverflowed && significand <= 1 << 53 && exponent >= -22 && exponent <= 22 {
            var value = Double(significand)
            if exponent < 0 {
                value /= exactPowersOfTen[-exponent]
            } else {
                value *= exactPowersOfTen[exponent]
            }
            return .double(negative ? -value : value)
        }

        let text = String(decoding: UnsafeBufferPointer(start: bytes + start, count: index - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw fail(.invalidNumber, at: start)
        }
        return .double(value)
    }
}
