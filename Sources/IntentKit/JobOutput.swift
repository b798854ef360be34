public import ConciergeJSON

/// The result of one job: its outcome and the body to send back (Interaction JSON, or an error object).
public struct JobOutput: Sendable, Hashable {
    /// How the job ended.
    public var outcome: JobOutcome
    /// UTF-8 JSON: the Interaction for ``JobOutcome/continue`` and ``JobOutcome/stop``, `{"code","message"}` for
    /// ``JobOutcome/error`` and ``JobOutcome/cancelled``.
    public var body: [UInt8]

    /// Creates a job output.
    public init(outcome: JobOutcome, body: [UInt8]) {
        self.outcome = outcome
        self.body = body
    }

    /// An ``JobOutcome/error`` output whose body is the error's JSON.
    public init(error: IntentError) {
        self.init(outcome: .error, body: error.jsonValue.serialized())
    }

    /// The output of a job whose handler stopped because the job was cancelled (`Schemas/PROTOCOL.md` section
    /// 5.13): outcome ``JobOutcome/cancelled``, body `{"code":"cancelled","message":"the handler stopped: the job was
    /// cancelled"}`.
    public static let cancelled = JobOutput(
        outcome: .cancelled,
        body: IntentError(code: .cancelled, message: "the handler stopped: the job was cancelled").jsonValue
            .serialized()
    )

    /// The body parsed as JSON (nil if it is not valid JSON, which the runner never produces).
    public var json: JSONValue? { try? JSONValue.parse(body) }
}
