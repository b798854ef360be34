import ConciergeJSON
import IntentKit

/// Decodes the phase results of an Interaction body (`Schemas/PROTOCOL.md` sections 11.6 to 11.10) into IntentKit's
/// response types. Tolerant of keys it does not know (receivers are tolerant outside `"intent"`, section 9).
enum _ResponseDecoding {
    static func confirmResponse<I: Intent>(_ json: JSONValue, as: I.Type) throws(IntentTestingError)
        -> ConfirmResponse<I>
    {
        let object = try object(json, "confirm")
        return ConfirmResponse(
            code: ConfirmCode(try string(object, "code", in: "confirm")),
            userActivity: try object["userActivity"].map { json throws(IntentTestingError) in
                try userActivity(json, "confirm.userActivity")
            },
            data: try optionalObject(object, "data", in: "confirm"),
            message: try optionalString(object, "message", in: "confirm")
        )
    }

    static func handleResponse<I: Intent>(_ json: JSONValue, as: I.Type) throws(IntentTestingError)
        -> HandleResponse<I>
    {
        let object = try object(json, "handle")
        return HandleResponse(
            code: HandleCode(try string(object, "code", in: "handle")),
            userActivity: try object["userActivity"].map { json throws(IntentTestingError) in
                try userActivity(json, "handle.userActivity")
            },
            data: try optionalObject(object, "data", in: "handle"),
            message: try optionalString(object, "message", in: "handle")
        )
    }

    static func error(_ json: JSONValue) throws(IntentTestingError) -> IntentError {
        let object = try object(json, "error body")
        return IntentError(
            code: IntentError.Code(rawValue: try string(object, "code", in: "error body")),
            message: try optionalString(object, "message", in: "error body") ?? "",
            parameter: try optionalString(object, "parameter", in: "error body"),
            intent: try optionalString(object, "intent", in: "error body")
        )
    }

    static func userActivity(_ json: JSONValue, _ path: String) throws(IntentTestingError) -> UserActivity {
        let object = try object(json, path)
        return UserActivity(
            activityType: try string(object, "activityType", in: path),
            userInfo: try optionalObject(object, "userInfo", in: path) ?? [:]
        )
    }

    static func object(_ json: JSONValue, _ path: String) throws(IntentTestingError) -> JSONObject {
        guard case .object(let object) = json else { throw undecodable("\(path) is not an object: \(json)") }
        return object
    }

    private static func string(_ object: JSONObject, _ key: String, in path: String) throws(IntentTestingError)
        -> String
    {
        guard let value = try optionalString(object, key, in: path) else {
            throw undecodable("\(path) has no \"\(key)\"")
        }
        return value
    }

    private static func optionalString(_ object: JSONObject, _ key: String, in path: String)
        throws(IntentTestingError) -> String?
    {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw undecodable("\(path).\(key) is not a string: \(other)")
        }
    }

    private static func optionalObject(_ object: JSONObject, _ key: String, in path: String)
        throws(IntentTestingError) -> JSONObject?
    {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        case let other?: throw undecodable("\(path).\(key) is not an object: \(other)")
        }
    }

    static func undecodable(_ message: String, parameter: String? = nil) -> IntentTestingError {
        IntentTestingError(code: .undecodable, message: message, parameter: parameter)
    }
}
