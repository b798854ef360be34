public import ConciergeJSON

/// A type that can be the value of an intent parameter.
///
/// IntentKit provides conformances for `String`, `Int`, `Double`, `Bool`, `Date`, ``IntentDateComponents``,
/// ``CurrencyAmount``, ``Person``, ``Placemark``, every ``IntentEnum``, and arrays of any of these.
/// The JSON encodings are those of the Interaction JSON in `Docs/DESIGN.md`.
public protocol IntentParameterValue: Sendable, Hashable {
    /// The parameter type this Swift type stands for.
    static var intentParameterType: ParameterType { get }

    /// Decodes a value from its JSON encoding.
    /// - Throws: ``IntentValueError`` when the JSON has the wrong shape.
    init(intentJSON json: JSONValue) throws(IntentValueError)

    /// The value's JSON encoding.
    var intentJSON: JSONValue { get }
}

/// A single (non-list) parameter value type: the element types that `[Element]` parameters accept.
///
/// Lists of lists cannot be described in an intent definition, so arrays themselves are not scalar values.
public protocol IntentScalarValue: IntentParameterValue {}
