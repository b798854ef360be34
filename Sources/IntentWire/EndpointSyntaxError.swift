/// An endpoint that ``EndpointSyntax/check(_:)`` refused; ``message`` names it and says what a valid one looks like.
public struct EndpointSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String { case malformedEndpoint = "malformed-endpoint" }
        private let value: Value
        /// Not `tcp://HOST:PORT`, `ipc://PATH` or `inproc://NAME`.
        public static let malformedEndpoint = Code(value: .malformedEndpoint)
        public var description: String { value.rawValue }
    }

    /// Always ``Code/malformedEndpoint`` for now; a stable code other checks may extend.
    public let code: Code
    /// The endpoint refused, as given.
    public let endpoint: String
    /// What is wrong and what a valid endpoint looks like.
    public let message: String

    init(endpoint: String, message: String) {
        self.code = .malformedEndpoint
        self.endpoint = endpoint
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
