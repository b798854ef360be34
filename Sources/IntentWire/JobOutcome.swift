/// How a job ended: frame F3 of a worker's RESULT (`Schemas/PROTOCOL.md` section 5.3).
///
/// The one definition of the outcome words: the worker runtime sends ``name``, the broker decodes it with
/// ``init(frame:)``, and IntentKit's job runner returns it in a `JobOutput`.
public enum JobOutcome: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The phase is done and a lifecycle may go on to the next phase.
    case `continue`
    /// The user is needed, or the response is final: the request ends with this body.
    case stop
    /// The job failed; the body is an error object `{"code", "message"}`, forwarded unchanged.
    case error

    /// The outcome's wire word.
    public var name: StaticString {
        switch self {
        case .continue: "continue"
        case .stop: "stop"
        case .error: "error"
        }
    }

    public var description: String { rawValue }

    /// Parses an outcome frame as a broker must (section 5.3): `continue`, `error`, and `stop` for any other word.
    public init(frame: UnsafeRawBufferPointer) {
        if Self.continue.name.matches(frame) {
            self = .continue
        } else if Self.error.name.matches(frame) {
            self = .error
        } else {
            self = .stop
        }
    }
}
