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
    public var data: JSONObject?
    /// A human-readable message.
    public var message: String?

    /// Creates a handle response.
    public init(
        code: HandleCode,
        userActivity: UserActivity? = nil,
        data: JSONObject? = nil,
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
        var object: JSONObject = ["code": .string(code.rawValue), "userActivity": activity.jsonValue]
        if let data { object["data"] = .object(data) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }

    /// Writes the JSON form of a response without its own ``userActivity`` (the same document
    /// ``jsonValue(intent:)`` gives, keys in the same order), with `intent`, the raw JSON text of the intent,
    /// copied into the default activity as it is. The data is serialized once, straight into `buffer`, and copied for
    /// its second place.
    func writeWithDefaultActivity(intent: ArraySlice<UInt8>, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: #"{"code":"#.utf8)
        JSONText.appendString(code.rawValue, to: &buffer)
        var dataRange: Range<Int>?
        if let data {
            buffer.append(contentsOf: #","data":"#.utf8)
            let start = buffer.count
            JSONValue.object(data).write(into: &buffer)
            dataRange = start..<buffer.count
        }
        if let message {
            buffer.append(contentsOf: #","message":"#.utf8)
            JSONText.appendString(message, to: &buffer)
        }
        buffer.append(contentsOf: #","userActivity":{"activityType":"#.utf8)
        JSONText.appendString(I.intentType, to: &buffer)
        buffer.append(contentsOf: #","userInfo":{"interaction":{"intent":"#.utf8)
        buffer.append(contentsOf: intent)
        buffer.append(contentsOf: #","response":{"code":"#.utf8)
        JSONText.appendString(code.rawValue, to: &buffer)
        if let dataRange {
            buffer.append(contentsOf: #","data":"#.utf8)
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: dataRange.count))
            buffer.withUnsafeMutableBufferPointer { bytes in
                guard let base = bytes.baseAddress else { return }
                (base + start).update(from: base + dataRange.lowerBound, count: dataRange.count)
            }
        }
        buffer.append(contentsOf: "}}}}}".utf8)
    }
}
