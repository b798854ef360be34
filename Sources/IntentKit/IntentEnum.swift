public import ConciergeJSON

/// A custom enumeration used as a parameter type, encoded as its case name (the raw value).
///
/// ```swift
/// public enum WorkoutLocationType: String, IntentEnum {
///     case unknown, outdoor, indoor
/// }
/// ```
/// The enumeration appears in the intent definition under ``enumName`` (by default the Swift type's name) with
/// the raw values of all its cases, in declaration order.
public protocol IntentEnum: IntentScalarValue, RawRepresentable<String>, CaseIterable {
    /// The enumeration's name in intent definitions; defaults to the Swift type's name.
    static var enumName: String { get }
}

extension IntentEnum {
    public static var enumName: String { String(describing: Self.self) }

    public static var intentParameterType: ParameterType {
        .enumeration(name: enumName, cases: allCases.map(\.rawValue))
    }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        guard case .string(let name) = json else {
            throw .typeMismatch(expected: "\(Self.enumName) case name", got: json)
        }
        guard let value = Self(rawValue: name) else {
            let cases = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw IntentValueError(
                code: .invalidValue,
                message: "expected one of \(cases) (\(Self.enumName)), got \"\(name)\""
            )
        }
        self = value
    }

    public var intentJSON: JSONValue { .string(rawValue) }
}
