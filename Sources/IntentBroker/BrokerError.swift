/// Why a broker could not start or run.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case bindFailed = "bind-failed", badConfiguration = "bad-configuration"
            case insecureEndpoint = "insecure-endpoint"
        }
        private let value: Value
        /// An endpoint could not be bound.
        public static let bindFailed = Code(value: .bindFailed)
        /// A configuration value is out of bounds.
        public static let badConfiguration = Code(value: .badConfiguration)
        /// Without CURVE, an endpoint other hosts could reach (not loopback, `ipc://` or `inproc://`) was refused;
        /// see ``BrokerConfiguration/checkEndpointSecurity()``.
        public static let insecureEndpoint = Code(value: .insecureEndpoint)
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
