/// The type of an intent parameter, as it appears in intent definitions and on the wire.
///
/// Every ``IntentParameterValue`` reports its type through ``IntentParameterValue/intentParameterType``.
public indirect enum ParameterType: Sendable, Hashable, CustomStringConvertible {
    /// A JSON string.
    case string
    /// A JSON integer (`Int`).
    case integer
    /// A JSON number (`Double`).
    case double
    /// A JSON boolean.
    case boolean
    /// An instant as an ISO 8601 string, e.g. `"2026-11-22T10:00:00Z"` (`Date`).
    case date
    /// Calendar fields as an object (``IntentDateComponents``).
    case dateComponents
    /// A decimal amount with its currency (``CurrencyAmount``).
    case currencyAmount
    /// A person (``Person``).
    case person
    /// A place (``Placemark``).
    case placemark
    /// A custom enumeration (``IntentEnum``), encoded as the case name.
    case enumeration(name: String, cases: [String])
    /// A list of values of one non-list type, encoded as a JSON array.
    case list(ParameterType)

    /// The type's name in intent definition files: `string`, `integer`, ..., `enum`; for a list, its element's name.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .boolean: "boolean"
        case .date: "date"
        case .dateComponents: "dateComponents"
        case .currencyAmount: "currencyAmount"
        case .person: "person"
        case .placemark: "placemark"
        case .enumeration: "enum"
        case .list(let element): element.typeName
        }
    }

    /// Whether this is a list type.
    public var isList: Bool {
        if case .list = self { return true }
        return false
    }

    /// Whether this is an enumeration, or a list of one.
    public var isEnumeration: Bool {
        if case .enumeration = elementType { return true }
        return false
    }

    /// The element type of a list, or the type itself.
    public var elementType: ParameterType {
        if case .list(let element) = self { return element }
        return self
    }

    /// The names that ``typeName`` can take (the `type` values allowed in definition files).
    public static let typeNames: [String] = [
        "string", "integer", "double", "boolean", "date", "dateComponents", "currencyAmount", "person", "placemark",
        "enum",
    ]

    public var description: String {
        switch self {
        case .enumeration(let name, _): "enum \(name)"
        case .list(let element): "list of \(element)"
        default: typeName
        }
    }
}
