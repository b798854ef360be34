/// Why the broker refuses a worker message (`Schemas/PROTOCOL.md` section 5.12). The broker answers ERROR with
/// ``code`` and ``message`` and drops the message.
public struct WorkerMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable error code: `malformed`, `unsupported-version` or `unknown-command`.
    public let code: WireErrorCode
    /// Human-readable text for the ERROR's F3.
    public let message: String
    /// The number of the failed check in section 5.12: 1, 2, 3, 5 or 6.
    public let check: Int
    /// The command F1 names, when it is a worker command (a malformed READY or RESULT).
    public let command: WorkerCommand.Name?

    /// An error with these fields (the decoder makes them).
    public init(code: WireErrorCode, message: String, check: Int, command: WorkerCommand.Name? = nil) {
        self.code = code
        self.message = message
        self.check = check
        self.command = command
    }

    /// Whether the message came from a registered worker: checks 5 and 6 come after the registration check, so
    /// the message still proves that the worker is alive (section 7.1).
    public var isFromRegisteredWorker: Bool { check > 4 }

    public var description: String { "\(code) (check \(check)): \(message)" }
}
