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
            JSONText.appendString(value, to: &buffer)
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
            JSONWriter.forEachMemberSorted(members) { member in
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                JSONText.appendString(member.key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                member.value.write(into: &buffer)
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
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    @inline(__always)
    static func appendStatic(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // At most 19 digits (Int64.min): written backwards on the stack, appended in one go.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
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

    typealias Member = JSONObject.Member

    /// Calls `body` with each member of an object, in the order of the UTF-8 bytes of their keys, without copying
    /// a member: straight from the object's storage when the members are in that order already (a document this
    /// writer wrote and a parser read back), else through their positions sorted in a buffer on the stack for small
    /// objects (no allocation per object).
    static func forEachMemberSorted(_ object: JSONObject, _ body: (borrowing Member) -> Void) {
        object.members.withUnsafeBufferPointer { members in
            var inOrder = true
            var position = 1
            while inOrder && position < members.count {
                inOrder = utf8Precedes(members[position - 1].key, members[position].key)
                position += 1
            }
            if inOrder {
                for index in members.indices { body(members[index]) }
                return
            }
            withUnsafeTemporaryAllocation(of: Int.self, capacity: members.count) { order in
                for index in members.indices { order[index] = index }
                if members.count <= 16 {
                    // Insertion sort: fewest comparisons and no closure overhead for typical small objects.
                    for unsortedStart in order.indices.dropFirst() {
                        var position = unsortedStart
                        while position > 0
                            && utf8Precedes(members[order[position]].key, members[order[position - 1]].key)
                        {
                            order.swapAt(position, position - 1)
                            position -= 1
                        }
                    }
                } else {
                    var positions = order
                    positions.sort { utf8Precedes(members[$0].key, members[$1].key) }
                }
                for index in order { body(members[index]) }
            }
        }
    }

    /// Orders strings by their UTF-8 bytes (not Swift's Unicode-aware `<`, which normalizes).
    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        let fast = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                let shared = min(left.count, right.count)
                var position = 0
                while position < shared {
                    if left[position] != right[position] { return left[position] < right[position] }
                    position += 1
                }
                return left.count < right.count
            }
        }
        if let fast, let result = fast { return result }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
