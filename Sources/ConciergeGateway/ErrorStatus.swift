public import HTTPTypes
import Hummingbird

/// The HTTP status of every error code: the broker's (PROTOCOL.md 10.2), the client library's (`ClientError`) and
/// the gateway's own. Docs/GATEWAY.md has this table; a code not in it (a newer broker's) is 502.
///
/// The rule behind the numbers: the caller's mistake is 4xx (400 for what cannot be read, 422 for what was read
/// but does not fit, 404 for what does not exist, 409 for a conflict with the resource's state, 429 for load); the
/// broker's or a worker's trouble is 5xx (503 when it may pass by itself, 504 for the hard limit, 502 when the
/// outcome of an upstream job is unknown).
public enum ErrorStatus {
    /// Every code and its status.
    public static let table: [String: Int] = [
        // Unreadable input (the gateway checks most of these before the broker sees them).
        "bad-json": 400, "bad-interaction": 422, "bad-phase": 400, "bad-deadline": 400, "bad-definition-version": 400,
        "bad-idempotency-key": 400, "bad-request-id": 400, "bad-conversation-id": 400, "bad-wait": 400,
        "bad-body": 400, "bad-answer": 400, "bad-flags": 400, "bad-trace-context": 400,
        "unsupported-media-type": 415, "not-acceptable": 406, "body-too-large": 413, "too-large": 413,
        "unauthorized": 401, "forbidden": 403, "not-found": 404, "method-not-allowed": 405,
        // Read, but does not fit the intent's definition or the conversation.
        "unknown-parameter": 422, "invalid-type": 422, "out-of-range": 422, "missing-parameter": 422,
        "invalid-enum": 422, "handler-failed": 422, "idempotency-conflict": 422, "not-asked": 422,
        "bad-option": 422,
        // Does not exist (for this identity).
        "unknown-intent": 404, "unknown-request": 404, "unknown-conversation": 404,
        // Conflicts with the resource's state.
        "cancelled": 409, "duplicate-request": 409, "conversation-ended": 409, "turn-mismatch": 409,
        "turn-in-flight": 409, "too-many-asks": 409,
        // Load.
        "busy": 429, "throttled": 429,
        // The broker or its workers.
        "timeout": 504, "unavailable": 503, "shutting-down": 503, "connection-lost": 503, "closed": 503,
        "worker-lost": 502, "worker-crashed": 502, "outcome-unknown": 502, "broker-restarted": 502,
        "handshake-failed": 502, "transport": 502, "malformed": 502, "unsupported-version": 502,
        "unknown-command": 502, "cancel-unsupported": 501, "conversations-unsupported": 501, "internal": 500,
    ]

    /// The status of `code`, with its reason phrase (the problem's `title`).
    public static func status(of code: String) -> HTTPResponse.Status {
        let number = table[code] ?? 502
        return HTTPResponse.Status(code: number, reasonPhrase: phrases[number] ?? "Error")
    }

    private static let phrases: [Int: String] = [
        400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
        409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
        429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
        503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}
