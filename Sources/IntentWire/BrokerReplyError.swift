/// Why a client cannot use a message from the broker's frontend (`Schemas/PROTOCOL.md` sections 4.5-4.7). A client
/// logs it and drops the message (section 10.3).
public struct BrokerReplyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the message, as a stable code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable { case signature, command, frameCount, status }
        private let value: Value

        /// F0 is not `CIPC01` or `CIPC02`, or the message has fewer than 2 frames.
        public static let signature = Code(value: .signature)
        /// F1 is not REPLY, STATUS or PONG.
        public static let command = Code(value: .command)
        /// A REPLY or STATUS answer without 6 frames (7 in version 2), or a PONG without 2.
        public static let frameCount = Code(value: .frameCount)
        /// F3 is not `final`, `progress` or `error`.
        public static let status = Code(value: .status)

        public var description: String {
            switch value {
            case .signature: "signature"
            case .command: "command"
            case .frameCount: "frame-count"
            case .status: "status"
            }
        }
    }

    /// What is wrong.
    public let code: Code
    /// Human-readable text for the log.
    public let message: String

    /// An error with these fields (the decoder makes them).
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
