/// Why a worker stopped other than by being asked to.
public struct WorkerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case pollFailed = "poll-failed", alreadyRan = "already-ran"
        }
        private let value: Value
        /// Waiting on the worker's socket failed (`zmq_poll` reported an error other than an interruption), so the
        /// worker closed its connection and stopped; the message names the libzmq error.
        public static let pollFailed = Code(value: .pollFailed)
        /// ``Worker/run()`` was called a second time: a worker runs once; make a new one to run again.
        public static let alreadyRan = Code(value: .alreadyRan)
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
