public import ConciergeJSON

/// A person, such as a message recipient or a payee (SiriKit's `INPerson`).
///
/// JSON: `{"displayName": s, "handle"?: s, "handleType"?: "phoneNumber"|"emailAddress"|"unknown",
/// "customIdentifier"?: s}`.
///
/// Set ``customIdentifier`` when you resolve a person to one of your own records: the resolved value is written back
/// into the intent, so the next round of resolution can look the record up directly instead of matching names.
public struct Person: IntentScalarValue {
    /// The kind of handle a person is reached at.
    public enum HandleType: String, Sendable, Hashable, CaseIterable {
        /// A phone number.
        case phoneNumber
        /// An email address.
        case emailAddress
        /// Another kind of handle (e.g. a user name in the app).
        case unknown
    }

    /// The name to show, e.g. "John Appleseed" (or just what the user said, e.g. "John").
    public var displayName: String
    /// A phone number, email address or other handle.
    public var handle: String?
    /// What kind of handle ``handle`` is.
    public var handleType: HandleType?
    /// The app's own identifier for this person (e.g. a contact record id).
    public var customIdentifier: String?

    /// Creates a person.
    public init(
        displayName: String, handle: String? = nil, handleType: HandleType? = nil, customIdentifier: String? = nil
    ) {
        self.displayName = displayName
        self.handle = handle
        self.handleType = handleType
        self.customIdentifier = customIdentifier
    }

    public static var intentParameterType: ParameterType { .person }

    static let keys = ["displayName", "handle", "handleType", "customIdentifier"]

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "person object")
        let displayName = try reader.requiredString("displayName")
        let handle = try reader.optionalString("handle")
        let handleTypeText = try reader.optionalString("handleType")
        let customIdentifier = try reader.optionalString("customIdentifier")
        try reader.finish(known: Self.keys)
        var handleType: HandleType?
        if let handleTypeText {
            guard let type = HandleType(rawValue: handleTypeText) else {
                throw IntentValueError(
                    code: .invalidValue,
                    message: "handleType: expected one of phoneNumber, emailAddress, unknown, got \"\(handleTypeText)\""
                )
            }
            handleType = type
        }
        self.init(displayName: displayName, handle: handle, handleType: handleType, customIdentifier: customIdentifier)
    }

    public var intentJSON: JSONValue {
        var object: JSONObject = ["displayName": .string(displayName)]
        if let handle { object["handle"] = .string(handle) }
        if let handleType { object["handleType"] = .string(handleType.rawValue) }
        if let customIdentifier { object["customIdentifier"] = .string(customIdentifier) }
        return .object(object)
    }
}
