public import ConciergeJSON

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension String: IntentScalarValue {
    public static var intentParameterType: ParameterType { .string }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .string(let value) = json else { throw .typeMismatch(expected: "string", got: json) }
        self = value
    }

    public var intentJSON: JSONValue { .string(self) }
}

extension Int: IntentScalarValue {
    public static var intentParameterType: ParameterType { .integer }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .int(let value) = json else { throw .typeMismatch(expected: "integer", got: json) }
        guard let int = Int(exactly: value) else {
            throw IntentValueError(code: .invalidValue, message: "integer \(value) is out of range")
        }
        self = int
    }

    public var intentJSON: JSONValue { .int(Int64(self)) }
}

extension Double: IntentScalarValue {
    public static var intentParameterType: ParameterType { .double }

    /// Accepts JSON integers as well as other numbers.
    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        switch json {
        case .double(let value): self = value
        case .int(let value): self = Double(value)
        default: throw .typeMismatch(expected: "number", got: json)
        }
    }

    public var intentJSON: JSONValue { .double(self) }
}

extension Bool: IntentScalarValue {
    public static var intentParameterType: ParameterType { .boolean }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .bool(let value) = json else { throw .typeMismatch(expected: "boolean", got: json) }
        self = value
    }

    public var intentJSON: JSONValue { .bool(self) }
}

extension Date: IntentScalarValue {
    public static var intentParameterType: ParameterType { .date }

    /// Decodes an ISO 8601 date-time string: `2026-11-22T10:00:00Z`, optionally with fractional seconds and a
    /// `+hh:mm` / `-hh:mm` offset instead of `Z`.
    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .string(let text) = json else { throw .typeMismatch(expected: "ISO 8601 date string", got: json) }
        guard let seconds = _ISO8601.parse(text) else {
            throw IntentValueError(
                code: .invalidValue,
                message: "expected an ISO 8601 date such as \"2026-11-22T10:00:00Z\", got \"\(text)\""
            )
        }
        self.init(timeIntervalSince1970: seconds)
    }

    /// The date in UTC, e.g. `"2026-11-22T10:00:00Z"` (fractional seconds only when present, in milliseconds).
    public var intentJSON: JSONValue { .string(_ISO8601.format(timeIntervalSince1970)) }
}

extension Array: IntentParameterValue where Element: IntentScalarValue {
    public static var intentParameterType: ParameterType { .list(Element.intentParameterType) }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .array(let elements) = json else { throw .typeMismatch(expected: "array", got: json) }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do { result.append(try Element(intentJSON: element)) } catch { throw error.prefixed(with: "[\(index)]") }
        }
        self = result
    }

    public var intentJSON: JSONValue { .array(map(\.intentJSON)) }
}
