public import ConciergeJSON

/// What a handler's handle returns (SiriKit's intent response in the handle phase).
///
/// JSON: `{"code": c, "userActivity": UserActivity, "data"?: object, "message"?: s}`. When ``userActivity`` is nil
/// the job runner puts in the default one (``UserActivity/default(intentType:intent:code:data:)``).
public struct HandleResponse<I: Intent>: Sendable {
    /// The response code; must be one of the intent's ``Intent/handleCodes``.
    public var code: HandleCode
    /// What the app needs to continue; nil for the default activity.
    public var userActivity: UserActivity?
    /// What was done (e.g. a ride id and its ETA).
    public var data: [String: JSONValue]?
    /// A human-readable message.
    public var message: String?

    /// Creates a handle response.
    public init(
        code: HandleCode,
        userActivity: UserActivity? = nil,
        data: [String: JSONValue]? = nil,
        message: String? = nil
    ) {
        self.code = code
        self.userActivity = userActivity
        self.data = data
        self.message = message
    }

    /// The response's JSON form, with the default user activity for `intent` when ``userActivity`` is nil.
    public func jsonValue(intent: JSONValue) -> JSONValue {
        let activity =
            userActivity ?? .default(intentType: I.intentType, intent: intent, code: code.rawValue, data: data)
        var object: [String: JSONValue] = ["code": .string(code.rawValue), "userActivity": activity.jsonValue]
        if let data { object["data"] = .object(data) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }
}
