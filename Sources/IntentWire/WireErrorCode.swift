/// A stable error code carried in error bodies: `{"code": CODE, "message": text}`.
public struct WireErrorCode: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Wrong number of frames, or an empty frame where one is required.
    public static let malformed = WireErrorCode("malformed")
    /// The signature frame names another protocol or version.
    public static let unsupportedVersion = WireErrorCode("unsupported-version")
    /// The command frame is not a command of this sub-protocol.
    public static let unknownCommand = WireErrorCode("unknown-command")
    /// The request id is empty or longer than 255 bytes.
    public static let badRequestID = WireErrorCode("bad-request-id")
    /// The phase frame is not resolve, confirm, handle or lifecycle.
    public static let badPhase = WireErrorCode("bad-phase")
    /// The deadline frame is not a decimal number of milliseconds within bounds.
    public static let badDeadline = WireErrorCode("bad-deadline")
    /// The body is larger than the broker's maximum.
    public static let tooLarge = WireErrorCode("too-large")
    /// The request id is already in flight on this connection.
    public static let duplicateRequest = WireErrorCode("duplicate-request")
    /// No worker serves this intent type.
    public static let unknownIntent = WireErrorCode("unknown-intent")
    /// The broker's queue is full.
    public static let busy = WireErrorCode("busy")
    /// The request's hard time limit passed.
    public static let timeout = WireErrorCode("timeout")
    /// The worker running a handle job died; the job is not run again.
    public static let workerLost = WireErrorCode("worker-lost")
    /// A STATUS query names a request the broker does not know (any more).
    public static let unknownRequest = WireErrorCode("unknown-request")
    /// A resolve handler threw.
    public static let handlerFailed = WireErrorCode("handler-failed")
    /// The worker could not decode the body.
    public static let badBody = WireErrorCode("bad-body")
    /// The broker is shutting down.
    public static let shuttingDown = WireErrorCode("shutting-down")
    /// An unexpected failure inside Concierge.
    public static let `internal` = WireErrorCode("internal")
}
