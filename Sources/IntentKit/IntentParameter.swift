public import ConciergeJSON

/// Describes one parameter of an intent: its name, its type (from the Swift value type) and how to read and write
/// it, plus the metadata of the intent definition file.
///
/// ```swift
/// .init("partySize", \.partySize, description: "Number of riders.", minimum: 1, maximum: 8)
/// ```
public struct IntentParameter<I: Intent>: Sendable {
    /// The parameter's name on the wire.
    public let name: String
    /// The parameter's type, derived from the Swift value type.
    public let type: ParameterType
    /// Whether the handler needs a value (documentation for clients; resolution enforces it).
    public let isRequired: Bool
    /// A one-line description for the definition file.
    public let description: String
    /// The smallest accepted value of a numeric parameter (documentation; the handler enforces it).
    public let minimum: Double?
    /// The largest accepted value of a numeric parameter (documentation; the handler enforces it).
    public let maximum: Double?
    /// The reasons the handler may give when it resolves this parameter as unsupported.
    public let unsupportedReasons: [String]

    let keyPath: any AnyKeyPath & Sendable
    private let get: @Sendable (I) -> JSONValue?
    private let set: @Sendable (inout I, JSONValue) throws(IntentValueError) -> Void

    /// Declares a parameter stored at `keyPath`.
    /// - Parameters:
    ///   - name: The parameter's name on the wire.
    ///   - keyPath: The optional stored property holding the value.
    ///   - required: Whether the handler needs a value.
    ///   - description: A one-line description for the definition file.
    ///   - minimum: The smallest accepted value of a numeric parameter.
    ///   - maximum: The largest accepted value of a numeric parameter.
    ///   - unsupportedReasons: The reasons an unsupported resolution of this parameter may carry.
    public init<Value: IntentParameterValue>(
        _ name: String,
        _ keyPath: any WritableKeyPath<I, Value?> & Sendable,
        required: Bool = false,
        description: String = "",
        minimum: Double? = nil,
        maximum: Double? = nil,
        unsupportedReasons: [String] = []
    ) {
        self.name = name
        self.type = Value.intentParameterType
        self.isRequired = required
        self.description = description
        self.minimum = minimum
        self.maximum = maximum
        self.unsupportedReasons = unsupportedReasons
        self.keyPath = keyPath
        self.get = { intent in intent[keyPath: keyPath]?.intentJSON }
        self.set = { (intent: inout I, json: JSONValue) throws(IntentValueError) in
            intent[keyPath: keyPath] = json.isNull ? nil : try Value(intentJSON: json)
        }
    }

    /// The parameter's value in `intent` as JSON, or nil when it has none.
    public func value(in intent: I) -> JSONValue? { get(intent) }

    /// Sets the parameter from JSON (`null` clears it).
    /// - Throws: ``IntentValueError`` when the JSON does not encode a value of the parameter's type.
    public func setValue(_ json: JSONValue, in intent: inout I) throws(IntentValueError) {
        try set(&intent, json)
    }

    /// Whether this parameter is stored at `keyPath`.
    func matches(_ other: AnyKeyPath) -> Bool { (keyPath as AnyKeyPath) == other }
}
