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
    /// Version 02 (section 5.13): the handler stopped because the job was cancelled, before doing anything it
    /// cannot undo; the body is an error object with code `cancelled`.
    case cancelled

    /// The outcome's wire word.
    @inlinable
    public var name: StaticString {
        switch self {
        case .continue: "continue"
        case .stop: "stop"
        case .error: "error"
        case .cancelled: "cancelled"
        }
    }

    public var description: String { rawValue }

    /// Parses an outcome frame as a broker must (section 5.3): `continue`, `error`, `cancelled` (version 02), and
    /// `stop` for any other word.
    public init(frame: UnsafeRawBufferPointer) {
        if Self.continue.name.matches(frame) {
            self = .continue
        } else if Self.error.name.matches(frame) {
            self = .error
        } else if Self.cancelled.name.matches(frame) {
            self = .cancelled
        } else {
            self = .stop
        }
    }
}
