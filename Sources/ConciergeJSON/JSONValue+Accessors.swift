/// Typed, non-throwing access to the contents of a ``JSONValue``. Every accessor returns `nil` when the
/// value has a different kind, so lookups chain naturally: `body["intent"]?["type"]?.stringValue`.
extension JSONValue {
    /// The member named `key`, or `nil` unless this is an object containing `key`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index`, or `nil` unless this is an array and `index` is within bounds.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// `true` only for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The boolean, or `nil` unless this is ``bool(_:)``.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The integer for ``int(_:)``, or for a ``double(_:)`` that is integral and within the `Int64`
    /// range (e.g. `2.0` → `2`); otherwise `nil` (fractions, out-of-range, non-finite, non-numbers).
    public var int64Value: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value):
            // Range check then truncating conversion (no libm `trunc`); NaN fails the range check.
            guard value >= -0x1p63 && value < 0x1p63 else { return nil }
            let truncated = Int64(value)
            return Double(truncated) == value ? truncated : nil
        default: return nil
        }
    }

    /// ``int64Value`` converted to `Int` when it fits (always, on 64-bit platforms).
    public var intValue: Int? {
        guard let value = int64Value, value >= Int64(Int.min), value <= Int64(Int.max) else { return nil }
        return Int(value)
    }

    /// The number as a `Double`: ``double(_:)`` as is, ``int(_:)`` converted (rounded to the nearest
    /// double when its magnitude exceeds 2^53); `nil` for non-numbers.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        default: return nil
        }
    }

    /// The string, or `nil` unless this is ``string(_:)``.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The elements, or `nil` unless this is ``array(_:)``.
    public var arrayValue: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }

    /// The members, or `nil` unless this is ``object(_:)``.
    public var objectValue: JSONObject? {
        guard case .object(let members) = self else { return nil }
        return members
    }
}
