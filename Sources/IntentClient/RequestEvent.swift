/// What ``ConciergeClient/request(intentType:phase:body:deadline:requestID:idempotencyKey:retry:events:)`` reports
/// while it runs, in order: each attempt as it goes out, its replies, and the wait before the next attempt.
public enum RequestEvent: Sendable {
    /// Attempt `attempt` (1 for the first) went out as request `requestID`, with `idempotencyKey` (the caller's, or
    /// the one generated for a ``RetryPolicy``; nil for none). `requestID` is the id to give
    /// ``ConciergeClient/cancel(requestID:)`` while this attempt is in flight.
    case sent(attempt: Int, requestID: String, idempotencyKey: String?)
    /// A reply of the attempt in flight: `progress`, or its ending (which is retried or returned);
    /// ``Reply/attempts`` is the attempt's number.
    case reply(Reply)
    /// Attempt `attempt` ended with the retryable error `code`; the next attempt goes out after `backoff`.
    case retrying(attempt: Int, code: String, backoff: Duration)
}
