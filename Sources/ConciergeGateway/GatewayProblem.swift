public import ConciergeJSON
public import HTTPTypes
import Hummingbird

/// An RFC 9457 problem (`application/problem+json`): what every error answer of the gateway carries, with the
/// broker's stable code (or the gateway's own) in `code` and the request id, when known, in `requestId`.
public struct GatewayProblem: Error, Sendable {
    /// The stable code (PROTOCOL.md 10.2, ``ErrorStatus`` for the gateway's own).
    public var code: String
    /// What went wrong, for people.
    public var detail: String
    /// The request it is about.
    public var requestID: String?
    /// Seconds after which the caller may try again (`Retry-After`), for `busy` and `throttled` (every 503 gets 1
    /// when not set).
    public var retryAfterSeconds: Int?
    /// More members: the broker's error body's other keys (`parameter`, `conversation`, `pushback_rate`, ...).
    public var extra: [String: JSONValue]

    /// A problem with `code` and `detail`.
    public init(
        code: String, detail: String, requestID: String? = nil, retryAfterSeconds: Int? = nil,
        extra: [String: JSONValue] = [:]
    ) {
        self.code = code
        self.detail = detail
        self.requestID = requestID
        self.retryAfterSeconds = retryAfterSeconds
        self.extra = extra
    }

    /// The broker's error body `body` (`{"code", "message", ...}`) as a problem; `busy` gets a `Retry-After` from
    /// its pushback (whole seconds, at least 1).
    public init(errorBody body: [UInt8], requestID: String?) {
        let json = (try? JSONValue.parse(body)) ?? .null
        let code = json["code"]?.stringValue ?? "internal"
        var extra: [String: JSONValue] = [:]
        for (key, value) in json.objectValue ?? [:] where key != "code" && key != "message" { extra[key] = value }
        var retryAfter: Int?
        if code == "busy" || code == "throttled" {
            let milliseconds = json["pushback_ms"]?.intValue ?? 1000
            retryAfter = max(1, (milliseconds + 999) / 1000)
        }
        self.init(
            code: code, detail: json["message"]?.stringValue ?? String(decoding: body.prefix(200), as: UTF8.self),
            requestID: requestID, retryAfterSeconds: retryAfter, extra: extra)
    }

    /// The HTTP status of ``code`` (``ErrorStatus``).
    public var status: HTTPResponse.Status { ErrorStatus.status(of: code) }

    /// The problem document.
    public var json: JSONValue {
        var object: [String: JSONValue] = extra
        object["type"] = .string("urn:concierge:problem:\(code)")
        object["title"] = .string(status.reasonPhrase)
        object["status"] = .int(Int64(status.code))
        object["detail"] = .string(detail)
        object["code"] = .string(code)
        if let requestID { object["requestId"] = .string(requestID) }
        return .object(JSONObject(object))
    }

    /// The answer: status, `application/problem+json`, `Retry-After` when set, `Concierge-Request-Id` when known.
    func response(headers extraHeaders: HTTPFields = [:]) -> Response {
        var headers = extraHeaders
        headers[.contentType] = "application/problem+json"
        // Every 503 may pass by itself (Docs/GATEWAY.md's table): it says when to try again.
        if let seconds = retryAfterSeconds ?? (status.code == 503 ? 1 : nil) { headers[.retryAfter] = String(seconds) }
        if let requestID { headers[GatewayHeaders.requestID] = requestID }
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.serialized())))
    }
}
