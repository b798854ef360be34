/// How a job ended, as sent to the broker in a worker's RESULT.
public enum JobOutcome: String, Sendable {
    /// The phase is done and the lifecycle may go on to the next phase.
    case `continue`
    /// The user is needed, or the response is final: the lifecycle ends here.
    case stop
    /// The job failed; the body is an error object `{"code", "message"}`.
    case error
}
