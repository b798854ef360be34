/// Why a broker could not start or run.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case bindFailed = "bind-failed", badConfiguration = "bad-configuration"
            case insecureEndpoint = "insecure-endpoint"
            case alreadyRan = "already-ran", pollFailed = "poll-failed"
            case journalFailed = "journal-failed"
            case permissionsNeedCurve = "permissions-need-curve"
        }
        private let value: Value
        /// An endpoint could not be bound.
        public static let bindFailed = Code(value: .bindFailed)
        /// A configuration value is out of bounds.
        public static let badConfiguration = Code(value: .badConfiguration)
        /// Without CURVE, an endpoint other hosts could reach (not loopback, `ipc://` or `inproc://`) was refused;
        /// see ``BrokerConfiguration/checkEndpointSecurity()``.
        public static let insecureEndpoint = Code(value: .insecureEndpoint)
        /// ``Broker/run()`` was called a second time: a broker runs once (its sockets close when it stops); make
        /// a new one to run again.
        public static let alreadyRan = Code(value: .alreadyRan)
        /// Waiting on the broker's sockets failed (`zmq_poll` reported an error other than an interruption), so the
        /// broker stopped; the message names the libzmq error.
        public static let pollFailed = Code(value: .pollFailed)
        /// The journal could not be opened or read at start, or a commit failed while running: the
        /// broker stops rather than act on what it could not record; the message carries the journal's error code
        /// and says what to do.
        public static let journalFailed = Code(value: .journalFailed)
        /// A permissions file was given without CURVE: without keys there is no identity to give permissions to.
        public static let permissionsNeedCurve = Code(value: .permissionsNeedCurve)
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
