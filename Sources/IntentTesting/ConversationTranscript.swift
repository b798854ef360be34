/// The turns of an ``IntentConversation`` so far, for failure messages: what the test said, the phases that ran and
/// what they answered.
///
/// ```
/// 1. send {"parameters":{"content":"Hi","recipient":{"displayName":"John"}},"type":"SendMessage"}
///    ran: resolve stop
///    resolve: recipient disambiguation [0: {"customIdentifier":"contact-john-appleseed",…}, 1: …]; content success "Hi"
/// 2. choose recipient option 0
///    ran: resolve continue, confirm continue, handle stop
///    ...
/// ```
public struct ConversationTranscript: Sendable, Hashable, CustomStringConvertible {
    /// One turn: what the test said and what the handler answered.
    public struct Entry: Sendable, Hashable {
        /// What the test said, e.g. `choose recipient option 0`.
        public let said: String
        /// The phases that ran, each with its outcome, e.g. `resolve continue`.
        public let ran: [String]
        /// The results of the turn, one line per phase result (or why its output could not be decoded).
        public let answered: String

        /// Creates an entry.
        public init(said: String, ran: [String], answered: String) {
            self.said = said
            self.ran = ran
            self.answered = answered
        }
    }

    /// The turns, first first.
    public internal(set) var entries: [Entry]

    /// Creates a transcript of `entries`.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    public var description: String {
        var lines: [String] = []
        for (index, entry) in entries.enumerated() {
            lines.append("\(index + 1). \(entry.said)")
            lines.append("   ran: \(entry.ran.joined(separator: ", "))")
            for line in entry.answered.split(separator: "\n", omittingEmptySubsequences: false) {
                lines.append("   \(line)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
