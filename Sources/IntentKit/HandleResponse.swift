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

    /// Writes the JSON form of a response without its own ``userActivity`` (the same document
    /// ``jsonValue(intent:)`` gives, keys in the same order), with `intent`, the raw JSON text of the intent,
    /// copied into the default activity as it is.
    func writeWithDefaultActivity(intent: ArraySlice<UInt8>, into buffer: inout [UInt8]) {
        var dataBytes: [UInt8] = []
        if let data { JSONValue.object(data).write(into: &dataBytes) }
        let codeValue = JSONValue.string(code.rawValue)
        buffer.append(contentsOf: #"{"code":"#.utf8)
        codeValue.write(into: &buffer)
        if data != nil {
            buffer.append(contentsOf: #","data":"#.utf8)
            buffer.append(contentsOf: dataBytes)
        }
        if let message {
            buffer.append(contentsOf: #","message":"#.utf8)
            JSONValue.string(message).write(into: &buffer)
        }
        buffer.append(contentsOf: #","userActivity":{"activityType":"#.utf8)
        JSONValue.string(I.intentType).write(into: &buffer)
        buffer.append(contentsOf: #","userInfo":{"interaction":{"intent":"#.utf8)
        buffer.append(contentsOf: intent)
        buffer.append(contentsOf: #","response":{"code":"#.utf8)
        codeValue.write(into: &buffer)
        if data != nil {
            buffer.append(contentsOf: #","data":"#.utf8)
            buffer.append(contentsOf: dataBytes)
        }
        buffer.append(contentsOf: "}}}}}".utf8)
    }
}
