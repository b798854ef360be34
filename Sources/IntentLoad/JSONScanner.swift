import IntentWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds a few values in a JSON document without building it: the load client classifies every reply by its
/// response code, and a full parse per reply would make the client cost more than the broker it measures.
///
/// Strings are returned raw (escapes not decoded): the codes and kinds it reads are plain ASCII words. Any
/// malformed input makes a lookup return nil.
struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0
    private static let maxDepth = 64

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Calls `body` with each member of the object that starts at the current position (key raw bytes, then a
    /// scanner positioned at the value) until `body` returns false; the rest of the object is still checked.
    /// Leaves the position after the object. Returns false when the input is not a well-formed object.
    mutating func forEachMember(_ body: (UnsafeRawBufferPointer, inout JSONScanner) -> Bool) -> Bool {
        forEachMemberReading { key, value in (more: body(key, &value), read: false) }
    }

    /// ``forEachMember(_:)`` for a `body` that may read a member's whole value itself: when it returns `read: true`,
    /// it has checked the value and left its scanner just after it, so the value is not scanned a second time.
    mutating func forEachMemberReading(
        _ body: (UnsafeRawBufferPointer, inout JSONScanner) -> (more: Bool, read: Bool)
    ) -> Bool {
        skipSpaces()
        guard consume(UInt8(ascii: "{")) else { return false }
        skipSpaces()
        if consume(UInt8(ascii: "}")) { return true }
        var wantsMore = true
        while true {
            skipSpaces()
            guard let key = readString() else { return false }
            skipSpaces()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipSpaces()
            let valueStart = position
            var read = false
            if wantsMore {
                var valueScanner = self
                (wantsMore, read) = body(key, &valueScanner)
                if read { position = valueScanner.position }
            }
            if !read {
                position = valueStart
                guard skipValue(depth: 0) else { return false }
            }
            skipSpaces()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "}"))
        }
    }

    /// The raw bytes of member `key` of the object at the current position, if it is a string.
    mutating func stringMember(_ key: StaticString) -> UnsafeRawBufferPointer? {
        var found: UnsafeRawBufferPointer?
        let wellFormed = forEachMember { name, value in
            guard key.matches(name) else { return true }
            value.skipSpaces()
            found = value.readString()
            return false
        }
        return wellFormed ? found : nil
    }

    // MARK: Lexing

    mutating func skipSpaces() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Reads a string at the position; returns its raw content.
    mutating func readString() -> UnsafeRawBufferPointer? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = position
        position = Self.nextQuoteOrBackslash(bytes, from: position)
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return content
            }
            position += byte == UInt8(ascii: "\\") ? 2 : 1
            if position < bytes.count { position = Self.nextQuoteOrBackslash(bytes, from: position) }
        }
        return nil
    }

    /// The position of the first `"` or `\` at or after `position`, or `bytes.count` (the load client's hottest loop:
    /// replies carry long strings). The first 16 bytes are read a word at a time, which ends most strings (keys,
    /// codes); past them libc's `memchr` finds the quote, 32 bytes at a time, then looks for a backslash before it
    /// (strings rarely hold escapes).
    @inline(__always)
    private static func nextQuoteOrBackslash(_ bytes: UnsafeRawBufferPointer, from position: Int) -> Int {
        guard let base = bytes.baseAddress else { return position }
        let count = bytes.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var position = position
        for _ in 0..<2 {
            guard position &+ 8 <= count else { break }
            let word = UInt64(littleEndian: (base + position).loadUnaligned(as: UInt64.self))
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let found = ((quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes) & highBits
            if found != 0 { return position &+ (found.trailingZeroBitCount >> 3) }
            position &+= 8
        }
        guard position < count else { return count }
        let start = base + position
        var span = count - position
        if let quote = memchr(start, 0x22, span) { span = start.distance(to: UnsafeRawPointer(quote)) }
        if span > 0, let backslash = memchr(start, 0x5C, span) {
            return position + start.distance(to: UnsafeRawPointer(backslash))
        }
        return position + span
    }

    private mutating func skipValue(depth: Int) -> Bool {
        guard depth < Self.maxDepth, position < bytes.count else { return false }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return readString() != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = bytes[position] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            position += 1
            skipSpaces()
            if consume(close) { return true }
            while true {
                skipSpaces()
                if isObject {
                    guard readString() != nil else { return false }
                    skipSpaces()
                    guard consume(UInt8(ascii: ":")) else { return false }
                    skipSpaces()
                }
                guard skipValue(depth: depth + 1) else { return false }
                skipSpaces()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(close)
            }
        default:
            // Numbers and literals: everything up to a delimiter.
            let start = position
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                    return position > start
                default: position += 1
                }
            }
            return position > start
        }
    }
}
