/// Why a load run could not start or finish, with a stable code.
public struct LoadError: Error, Sendable, CustomStringConvertible {
    /// A stable error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A flag or configuration value is out of range or inconsistent.
        public static let badConfiguration = Code("bad-configuration")
        /// A workload (mix file) could not be read or is not valid.
        public static let badWorkload = Code("bad-workload")
        /// The broker did not answer a PING in time.
        public static let unreachable = Code("unreachable")
        /// Every answer so far was the error `unknown-intent`: no worker serves the workload's intent type, so the
        /// run stopped instead of measuring how fast the broker says so.
        public static let unknownIntent = Code("unknown-intent")
        /// A socket operation failed.
        public static let socket = Code("socket")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
