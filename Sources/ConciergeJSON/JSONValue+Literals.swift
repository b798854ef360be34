/// Literal conformances, so values can be written inline:
/// `let body: JSONValue = ["intent": ["type": "SendMessage", "parameters": ["count": 2, "ok": true]]]`.
extension JSONValue: ExpressibleByNilLiteral {
    /// Creates ``null``.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Creates ``bool(_:)``.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Creates ``int(_:)``.
    public init(integerLiteral value: Int64) {
        self = .int(value)
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Creates ``double(_:)``.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Creates ``string(_:)``.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Creates ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Creates ``object(_:)``. As when parsing, a duplicated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members = JSONObject(minimumCapacity: elements.count)
        for (key, value) in elements {
            members[key] = value
        }
        self = .object(members)
    }
}
