public import ConciergeJSON

/// What a handler's confirm returns (SiriKit's intent response in the confirm phase).
///
/// JSON: `{"code": c, "userActivity"?: UserActivity, "data"?: object, "message"?: s}`. The lifecycle goes on to
/// handle only when the code is ``ConfirmCode/ready``.
public struct ConfirmResponse<I: Intent>: Sendable {
    /// The response code; must be one of the intent's ``Intent/confirmCodes``.
    public var code: ConfirmCode
    /// What the app needs if the user has to continue there.
    public var userActivity: UserActivity?
    /// Details to show the user (e.g. the price and the ETA of a ride).
    public var data: JSONObject?
    /// A human-readable message (e.g. why it failed).
    public var message: String?

    /// Creates a confirm response.
    public init(
        code: ConfirmCode,
        userActivity: UserActivity? = nil,
        data: JSONObject? = nil,
        message: String? = nil
    ) {
        self.code = code
        self.userActivity = userActivity
        self.data = data
        self.message = message
    }

    /// A plain ``ConfirmCode/ready`` response.
    public static var ready: ConfirmResponse { ConfirmResponse(code: .ready) }

    /// The response's JSON form.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["code": .string(code.rawValue)]
        if let userActivity { object["userActivity"] = userActivity.jsonValue }
        if let data { object["data"] = .object(data) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }
}
