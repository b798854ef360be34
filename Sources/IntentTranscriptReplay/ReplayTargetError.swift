/// Why a replay target (a worker process, a broker) could not answer a replay at all, as opposed to answering
/// differently (a mismatch).
public struct ReplayTargetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable classification.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable string form, e.g. `"worker-not-ready"`.
        public let rawValue: String

        /// Creates a code from its stable string form.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The worker executable could not be started, or exited, or sent no READY in time.
        public static let workerNotReady = Code(rawValue: "worker-not-ready")
        /// The worker exited, or sent DISCONNECT, during the replay.
        public static let workerGone = Code(rawValue: "worker-gone")
        /// No answer (RESULT or REPLY) came in time.
        public static let noAnswer = Code(rawValue: "no-answer")
        /// The peer sent a message the codec refused.
        public static let protocolError = Code(rawValue: "protocol-error")
        /// A socket or file call failed.
        public static let io = Code(rawValue: "io")
        /// The transcript cannot be replayed this way (e.g. a phase word the wire does not know).
        public static let notReplayable = Code(rawValue: "not-replayable")

        /// The stable string form (same as ``rawValue``).
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// What, in words (for a worker that did not start: the end of its log).
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
