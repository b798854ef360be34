/// A bad `--http` address, or one that cannot be bound.
public struct HTTPEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Not `HOST:PORT`.
        public static let malformed = Code(rawValue: "malformed")
        /// Other hosts could reach it and `--insecure` was not given.
        public static let insecure = Code(rawValue: "insecure-endpoint")
        /// The address cannot be bound (in use, not an address of this host, not permitted); the message says
        /// which and why.
        public static let bindFailed = Code(rawValue: "bind-failed")
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
