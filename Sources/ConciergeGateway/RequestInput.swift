import ConciergeJSON
import HTTPTypes
import Hummingbird
import HummingbirdCore
import IntentWire

/// Reading what a caller sent: the body (its media type, its size, JSON), the headers and query parameters.
/// Each function throws the ``GatewayProblem`` the caller gets.
enum RequestInput {
    /// A request's query parameters, parsed (Hummingbird parses them again at each `queryParameters`).
    typealias Query = FlatDictionary<Substring, Substring>

    /// The body as JSON: its media type must be `application/json` (or `+json`), it must fit in `limit` bytes,
    /// and it must parse.
    static func json(_ request: Request, limit: Int) async throws -> JSONValue {
        try await jsonBody(request, limit: limit).json
    }

    /// ``json(_:limit:)``, and the body's bytes as sent.
    static func jsonBody(_ request: Request, limit: Int) async throws -> (bytes: [UInt8], json: JSONValue) {
        let type = mediaType(request.headers[.contentType])
        guard type == "application/json" || type.hasSuffix("+json") else {
            throw GatewayProblem(
                code: "unsupported-media-type",
                detail: "the body must be application/json, not \(request.headers[.contentType] ?? "none given")")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw tooLarge(limit)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw tooLarge(limit)
        }
        let bytes = Array(buffer.readableBytesView)
        do {
            return (bytes, try JSONValue.parse(bytes))
        } catch {
            throw GatewayProblem(code: "bad-json", detail: "the body is not valid JSON: \(error)")
        }
    }

    private static func tooLarge(_ limit: Int) -> GatewayProblem {
        GatewayProblem(code: "body-too-large", detail: "the body is larger than this gateway's limit of \(limit) bytes")
    }

    /// `type/subtype` of a `Content-Type` value, lowercased, without parameters.
    static func mediaType(_ value: String?) -> String {
        guard let value else { return "" }
        if value == "application/json" { return value }  // as nearly every caller sends it
        var bytes = Array(value.utf8.prefix { $0 != UInt8(ascii: ";") })
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        return String(decoding: bytes[start...].map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether the caller asks for server-sent events.
    static func wantsEventStream(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        return accept.split(separator: ",").contains { mediaType(String($0)) == "text/event-stream" }
    }

    /// The Interaction of a request body: an object with an `"intent"` object whose `"type"` is a non-empty string.
    static func interaction(_ json: JSONValue) throws(GatewayProblem) -> (body: JSONValue, intentType: String) {
        guard json.objectValue != nil else {
            throw GatewayProblem(
                code: "bad-interaction", detail: "the body must be an Interaction object: {\"intent\": {\"type\": ...}}"
            )
        }
        guard let intent = json["intent"], intent.objectValue != nil else {
            throw GatewayProblem(
                code: "bad-interaction",
                detail: "the Interaction has no \"intent\" object: {\"intent\": {\"type\": ...}}")
        }
        guard let type = intent["type"]?.stringValue, !type.isEmpty, type.utf8.count <= 255 else {
            throw GatewayProblem(
                code: "bad-interaction", detail: "the intent has no \"type\" (a string of 1 to 255 bytes)")
        }
        if let identifier = intent["identifier"], identifier.stringValue == nil {
            throw GatewayProblem(code: "bad-interaction", detail: "the intent's \"identifier\" must be a string")
        }
        if let parameters = intent["parameters"], parameters.objectValue == nil {
            throw GatewayProblem(code: "bad-interaction", detail: "the intent's \"parameters\" must be an object")
        }
        for key in ["resolve", "confirm", "handle"] where json[key] != nil && json[key]?.objectValue == nil {
            throw GatewayProblem(code: "bad-interaction", detail: "the Interaction's \"\(key)\" must be an object")
        }
        return (json, type)
    }

    /// The phase (`?phase=`), lifecycle when not given.
    static func phase(_ request: Request) throws(GatewayProblem) -> RequestPhase {
        try phase(request.uri.queryParameters)
    }

    /// ``phase(_:)-(Request)`` of a query already parsed.
    static func phase(_ query: Query) throws(GatewayProblem) -> RequestPhase {
        guard let text = query["phase"].map(String.init) else { return .lifecycle }
        guard let phase = RequestPhase(rawValue: text) else {
            throw GatewayProblem(
                code: "bad-phase",
                detail: "phase must be resolve, confirm, handle or lifecycle, not \"\(text.prefix(64))\"")
        }
        return phase
    }

    /// The definition version asked for (`?definition_version=`, PROTOCOL.md 5.18): a whole number from 1; nil when
    /// not given (the broker pins the oldest version served).
    static func definitionVersion(_ request: Request) throws(GatewayProblem) -> Int? {
        try definitionVersion(request.uri.queryParameters)
    }

    /// ``definitionVersion(_:)-(Request)`` of a query already parsed.
    static func definitionVersion(_ query: Query) throws(GatewayProblem) -> Int? {
        guard let text = query["definition_version"].map(String.init) else { return nil }
        guard let version = Int(text), (1...Int(Int32.max)).contains(version) else {
            throw GatewayProblem(
                code: "bad-definition-version",
                detail: "definition_version must be a whole number from 1, not \"\(text.prefix(64))\"")
        }
        return version
    }

    /// The first-reply deadline: `Concierge-Deadline` (it wins) or `?deadline_ms=`, 10 to 60000 ms; nil: the
    /// broker's.
    static func deadline(_ request: Request) throws(GatewayProblem) -> Duration? {
        try deadline(request, query: request.uri.queryParameters)
    }

    /// ``deadline(_:)`` with the query already parsed.
    static func deadline(_ request: Request, query: Query) throws(GatewayProblem) -> Duration? {
        // Both are checked when both are given: a bad value is never silently overridden.
        let header = try milliseconds(request.headers[GatewayHeaders.deadline])
        let inQuery = try milliseconds(query["deadline_ms"].map(String.init))
        return (header ?? inQuery).map { .milliseconds($0) }
    }

    private static func milliseconds(_ text: String?) throws(GatewayProblem) -> Int? {
        guard let text else { return nil }
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), (10...60000).contains(value)
        else {
            throw GatewayProblem(
                code: "bad-deadline",
                detail: "the deadline is a whole number of milliseconds from 10 to 60000, not \"\(text.prefix(64))\"")
        }
        return value
    }

    /// `Idempotency-Key`: 1 to 255 bytes; nil when not given.
    static func idempotencyKey(_ request: Request) throws(GatewayProblem) -> String? {
        guard let key = request.headers[GatewayHeaders.idempotencyKey] else { return nil }
        guard (1...CIP.maxIdempotencyKeyLength).contains(key.utf8.count),
            key.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        else {
            throw GatewayProblem(
                code: "bad-idempotency-key", detail: "Idempotency-Key takes 1 to 255 bytes of printable ASCII")
        }
        return key
    }

    /// `?wait=` seconds of a long poll, 0 to 30 (fractions allowed); 0 when not given.
    static func wait(_ request: Request) throws(GatewayProblem) -> Duration {
        guard let text = request.uri.queryParameters["wait"].map(String.init) else { return .zero }
        guard let seconds = Double(text), seconds.isFinite, (0...30).contains(seconds) else {
            throw GatewayProblem(code: "bad-wait", detail: "wait takes 0 to 30 seconds, not \"\(text.prefix(64))\"")
        }
        return .milliseconds(Int((seconds * 1000).rounded()))
    }

    /// The `{id}` of a route: 1 to 255 bytes.
    static func pathID(_ context: BasicRequestContext, code: String) throws(GatewayProblem) -> String {
        guard let id = context.parameters.get("id"), (1...255).contains(id.utf8.count) else {
            throw GatewayProblem(code: code, detail: "an id has 1 to 255 bytes")
        }
        return id
    }
}
