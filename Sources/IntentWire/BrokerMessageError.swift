/// Why a worker cannot use a message from the broker (`Schemas/PROTOCOL.md` section 5.12, worker side).
///
/// With a ``jobID`` the worker answers RESULT `error` with ``code`` and ``message`` (so that the broker frees the
/// job's slot and the caller hears why); without one it logs the message and ignores it.
public struct BrokerMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable error code (`malformed`).
    public let code: WireErrorCode
    /// Human-readable text, for the RESULT's error body or the log.
    public let message: String
    /// The job id to answer, when the message is a JOB with an 8-byte F2.
    public let jobID: [UInt8]?
    /// The number of the failed check (W1-W7 in section 5.12).
    public let check: Int

    /// An error with these fields (the decoder makes them).
    public init(code: WireErrorCode = .malformed, message: String, jobID: [UInt8]? = nil, check: Int) {
        self.code = code
        self.message = message
        self.jobID = jobID
        self.check = check
    }

    public var description: String { "\(code) (check W\(check)): \(message)" }
}
