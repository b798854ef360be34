/// A JSON value: the small, strict, allocation-light value type used for broker message bodies.
///
/// Parse with `parse(_:maxDepth:)` (from an `UnsafeRawBufferPointer`, `[UInt8]` or `String`)
/// and serialize with ``serialized()``, ``serializedString()`` or ``write(into:)``.
///
/// Semantics worth knowing:
/// - Numbers written without a fraction or exponent that fit in `Int64` become ``int(_:)``; every other
///   number (including integers beyond the `Int64` range) becomes ``double(_:)``. `-0` is therefore
///   `.int(0)`, while `-0.0` is `.double(-0.0)`.
/// - Duplicate object keys: the **last** occurrence wins, both when parsing and for dictionary literals.
/// - Object keys are Swift `String`s, so keys that are canonically equivalent in Unicode (for example a
///   precomposed "é" and "e" + combining acute accent) compare equal and collapse into one entry.
/// - Equality is structural and exact: `.int(1)` is not equal to `.double(1.0)`; use the accessors
///   (``int64Value``, ``doubleValue``) for numeric comparisons.
public enum JSONValue: Sendable, Hashable {
    /// The JSON literal `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case int(Int64)
    /// Every other number. Non-finite values serialize as `null`.
    case double(Double)
    /// A string (always valid Unicode).
    case string(String)
    /// An array, in document order.
    case array([JSONValue])
    /// An object: its members in document (or insertion) order, with a dictionary's API (``JSONObject``).
    /// Serialization sorts keys by their UTF-8 bytes, so output is deterministic.
    case object(JSONObject)
}
