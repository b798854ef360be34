/// Why a worker stopped other than by being asked to.
public struct WorkerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case pollFailed = "poll-failed", alreadyRan = "already-ran", definitionRefused = "definition-refused"
            case registrationForbidden = "registration-forbidden"
        }
        private let value: Value
        /// Waiting on the worker's socket failed (`zmq_poll` reported an error other than an interruption), so the
        /// worker closed its connection and stopped; the message names the libzmq error.
        public static let pollFailed = Code(value: .pollFailed)
        /// ``Worker/run()`` was called a second time: a worker runs once; make a new one to run again.
        public static let alreadyRan = Code(value: .alreadyRan)
        /// The broker refused the worker's registration because one of its intent definitions differs from the one
        /// served (`definition-mismatch`, PROTOCOL.md section 5.16); the message says which and why. Registering
        /// again would only be refused again.
        public static let definitionRefused = Code(value: .definitionRefused)
        /// The broker refused the worker's registration: its permissions file does not let the worker's CURVE key
        /// serve one of its intent types (`forbidden`, PROTOCOL.md section 13.3); the message names them.
        public static let registrationForbidden = Code(value: .registrationForbidden)
        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
