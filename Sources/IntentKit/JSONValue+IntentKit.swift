import ConciergeJSON

extension JSONValue {
    /// The JSON type of this value in words, for error messages.
    var _kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// A number as JSON: integral values within Int64 range as integers, others as doubles.
    static func _number(_ value: Double) -> JSONValue {
        if value.rounded() == value, abs(value) < 9.0e15 { return .int(Int64(value)) }
        return .double(value)
    }
}

/// Reads the fields of a JSON object value strictly: every key must be consumed, unknown keys are errors.
struct _ObjectReader {
    private let object: JSONObject
    private var consumed = 0

    init(_ value: JSONValue, expected: String) throws(IntentValueError) {
        guard case .object(let object) = value else { throw .typeMismatch(expected: expected, got: value) }
        self.object = object
    }

    /// A present, non-null field.
    mutating func optional(_ key: String) -> JSONValue? {
        guard let value = object[key] else { return nil }
        consumed += 1
        return value.isNull ? nil : value
    }

    mutating func optionalString(_ key: String) throws(IntentValueError) -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let string) = value else {
            throw IntentValueError.typeMismatch(expected: "string", got: value).prefixed(with: key)
        }
        return string
    }

    mutating func requiredString(_ key: String) throws(IntentValueError) -> String {
        guard let string = try optionalString(key) else {
            throw IntentValueError(code: .missingKey, message: "missing \"\(key)\"")
        }
        return string
    }

    mutating func optionalInt(_ key: String) throws(IntentValueError) -> Int? {
        guard let value = optional(key) else { return nil }
        do { return try Int(intentJSON: value) } catch { throw error.prefixed(with: key) }
    }

    mutating func optionalDouble(_ key: String) throws(IntentValueError) -> Double? {
        guard let value = optional(key) else { return nil }
        do { return try Double(intentJSON: value) } catch { throw error.prefixed(with: key) }
    }

    /// Throws for the first key that was not read.
    func finish(known: [String]) throws(IntentValueError) {
        guard consumed < object.count else { return }
        let unknown = object.keys.filter { !known.contains($0) }.sorted()
        throw IntentValueError(
            code: .unknownKey,
            message: "unknown key \"\(unknown.first ?? "?")\" (expected one of: \(known.joined(separator: ", ")))"
        )
    }
}
