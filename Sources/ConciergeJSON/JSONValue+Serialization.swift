extension JSONValue {
    /// The compact UTF-8 serialization of this value.
    ///
    /// Output is deterministic: no insignificant whitespace, object keys sorted by their UTF-8 bytes,
    /// strings escaped minimally (`"`, `\`, and control characters), doubles written in their
    /// shortest round-tripping form (always with a `.` or exponent, so they re-parse as ``double(_:)``),
    /// and non-finite doubles written as `null`.
    public func serialized() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        write(into: &buffer)
        return buffer
    }

    /// The compact serialization as a `String`; same bytes as ``serialized()``.
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// Appends the compact serialization of this value (see ``serialized()``) to `buffer`.
    public func write(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            JSONWriter.appendStatic("null", to: &buffer)
        case .bool(let value):
            JSONWriter.appendStatic(value ? "true" : "false", to: &buffer)
        case .int(let value):
            JSONWriter.appendInteger(value, to: &buffer)
        case .double(let value):
            JSONWriter.appendDouble(value, to: &buffer)
        case .string(let value):
            JSONWriter.appendString(value, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                element.write(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members):
            buffer.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members.sorted(by: { JSONWriter.utf8Precedes($0.key, $1.key) }) {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                JSONWriter.appendString(key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                value.write(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of this value (``serializedString()``).
    public var description: String { serializedString() }
}

/// Byte-level helpers for serialization.
enum JSONWriter {
    @inline(__always)
    static func appendStatic(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = buffer.count
        repeat {
            buffer.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude != 0
        buffer[start...].reverse()
    }

    static func appendDouble(_ value: Double, to buffer: inout [UInt8]) {
        guard value.isFinite else {
            appendStatic("null", to: &buffer)
            return
        }
        // Swift's description is the shortest representation that round-trips ("1.0", "0.1", "1e+16",
        // "5e-324"), all valid JSON number syntax.
        var needsFraction = true
        for byte in value.description.utf8 {
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                needsFraction = false
            }
            buffer.append(byte)
        }
        if needsFraction {
            appendStatic(".0", to: &buffer)
        }
    }

    static func appendString(_ value: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for position in 0..<utf8.count {
                let byte = utf8[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if position > runStart {
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                }
                runStart = position + 1
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
                    appendStatic("u00", to: &buffer)
                    hexDigits.withUTF8Buffer { hex in
                        buffer.append(hex[Int(byte >> 4)])
                        buffer.append(hex[Int(byte & 0x0F)])
                    }
                }
            }
            if utf8.count > runStart {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Orders strings by their UTF-8 bytes (not Swift's Unicode-aware `<`).
    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let shared = min(left.count, right.count)
                for position in 0..<shared where left[position] != right[position] {
                    return left[position] < right[position]
                }
                return left.count < right.count
            }
        }
    }
}
