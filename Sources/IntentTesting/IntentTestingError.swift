/// A misuse of a conversation or a turn: an answer to a question that was not asked, or a result that is not there.
///
/// The ``code`` is stable (new codes may be added); the ``message`` names the parameter and what the conversation
/// was actually waiting for, and ``description`` appends the transcript of the turns so far, so a failing test
/// shows the whole conversation.
public struct IntentTestingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case notStarted = "not-started"
            case conversationEnded = "conversation-ended"
            case notInDisambiguation = "not-in-disambiguation"
            case optionOutOfRange = "option-out-of-range"
            case valueNotAsked = "value-not-asked"
            case nothingToConfirm = "nothing-to-confirm"
            case unknownParameter = "unknown-parameter"
            case noResolution = "no-resolution"
            case undecodable = "undecodable"
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }

        /// The code as text, e.g. `option-out-of-range`.
        public var rawValue: String { value.rawValue }

        public var description: String { value.rawValue }

        /// An answer was given before the conversation's first ``IntentConversation/send()``.
        public static let notStarted = Code(.notStarted)
        /// An answer (or a new send) after the conversation ended: handle answered, confirm answered a code other
        /// than `ready`, or a phase ended in an error or a cancellation.
        public static let conversationEnded = Code(.conversationEnded)
        /// An option was chosen for a parameter whose resolution is not `disambiguation`.
        public static let notInDisambiguation = Code(.notInDisambiguation)
        /// The option index is not one of the disambiguation's options.
        public static let optionOutOfRange = Code(.optionOutOfRange)
        /// A value was given for a parameter whose resolution is neither `needsValue` nor `unsupported`.
        public static let valueNotAsked = Code(.valueNotAsked)
        /// A confirmation was given while no parameter is `confirmationRequired` and no confirm step waits for the
        /// user.
        public static let nothingToConfirm = Code(.nothingToConfirm)
        /// The key path or name is not a declared parameter of the intent.
        public static let unknownParameter = Code(.unknownParameter)
        /// The turn has no resolution for the parameter (it ended before or without a resolve).
        public static let noResolution = Code(.noResolution)
        /// An output, or a value in it, does not decode as the intent's types.
        public static let undecodable = Code(.undecodable)
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// What went wrong, naming the parameter and what was asked.
    public let message: String
    /// The parameter the error is about, when there is one.
    public let parameter: String?
    /// What the conversation was waiting for when the error happened (e.g.
    /// `recipient: disambiguation (2 options)`), when the error comes from a conversation.
    public let asked: String?
    /// The turns so far, when the error comes from a conversation.
    public let transcript: ConversationTranscript?

    /// Creates an error.
    public init(
        code: Code,
        message: String,
        parameter: String? = nil,
        asked: String? = nil,
        transcript: ConversationTranscript? = nil
    ) {
        self.code = code
        self.message = message
        self.parameter = parameter
        self.asked = asked
        self.transcript = transcript
    }

    /// The same error with what the conversation was waiting for and its transcript.
    func with(asked: String, transcript: ConversationTranscript) -> IntentTestingError {
        IntentTestingError(code: code, message: message, parameter: parameter, asked: asked, transcript: transcript)
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let asked { text += "\nasked: \(asked)" }
        if let transcript, !transcript.entries.isEmpty { text += "\ntranscript:\n\(transcript)" }
        return text
    }
}
