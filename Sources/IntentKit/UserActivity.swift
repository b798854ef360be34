public import ConciergeJSON

/// What the app needs to continue a task itself (SiriKit's `NSUserActivity`): an activity type and free-form data.
///
/// JSON: `{"activityType": s, "userInfo": object}`.
public struct UserActivity: Sendable, Hashable {
    /// The activity type, e.g. `com.example.concierge.noLocationAvailable`.
    public var activityType: String
    /// Data for the app.
    public var userInfo: JSONObject

    /// Creates a user activity.
    public init(activityType: String, userInfo: JSONObject = [:]) {
        self.activityType = activityType
        self.userInfo = userInfo
    }

    /// The activity's JSON form.
    public var jsonValue: JSONValue {
        .object(["activityType": .string(activityType), "userInfo": .object(userInfo)])
    }

    /// The activity made when a handle response has none: its type is the intent type and its user info holds the
    /// interaction, `{"interaction": {"intent": <intent>, "response": {"code": c, "data"?: ...}}}`
    /// (SiriKit inserts an `INInteraction` the same way).
    public static func `default`(intentType: String, intent: JSONValue, code: String, data: JSONObject?)
        -> UserActivity
    {
        var response: JSONObject = ["code": .string(code)]
        if let data { response["data"] = .object(data) }
        return UserActivity(
            activityType: intentType,
            userInfo: ["interaction": .object(["intent": intent, "response": .object(response)])]
        )
    }
}
