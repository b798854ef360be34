public import ConciergeJSON

/// A conversation on a ``ConciergeClient``: send the user's answers to what it asks, one turn at a time.
///
/// ```swift
/// let first = try await client.startConversation(
///     intent: ["type": "SendMessage", "parameters": ["recipient": ["displayName": "John"], "content": "Hi"]])
/// // first.asking: recipient, disambiguation between John Appleseed and John Doe
/// let last = try await first.conversation.choose("recipient", option: 0)
/// print(last.interaction["handle"]?["code"], last.state?.ending)  // "success", completed
/// ```
/// The client numbers the turns; each call sends only the answer. A value of this type is just the conversation's
/// id and its client: keep it, or make one again with ``ConciergeClient/conversation(id:)``.
public struct Conversation: Sendable {
    /// The conversation id.
    public let id: String
    /// The client it talks through.
    public let client: ConciergeClient

    /// The conversation `id` on `client`.
    public init(id: String, client: ConciergeClient) {
        self.id = id
        self.client = client
    }

    /// Sends answers (applied in order) as the next turn, and returns its ending.
    public func send(
        _ answers: [ConversationAnswer], deadline: Duration? = nil, retry: RetryPolicy? = RetryPolicy(),
        progress: (@Sendable (Reply) -> Void)? = nil
    ) async throws -> ConversationTurn {
        try await client.answer(conversation: id, answers, deadline: deadline, retry: retry, progress: progress)
    }

    /// A value for `parameter` (JSON of the parameter's type).
    public func answer(_ parameter: String, value: JSONValue) async throws -> ConversationTurn {
        try await send([.value(parameter: parameter, value)])
    }

    /// Option `option` (from 0) of `parameter`'s disambiguation.
    public func choose(_ parameter: String, option: Int) async throws -> ConversationTurn {
        try await send([.option(parameter: parameter, index: option)])
    }

    /// Yes or no to `parameter`'s confirmation request.
    public func confirm(_ parameter: String, _ yes: Bool) async throws -> ConversationTurn {
        try await send([.confirmParameter(parameter: parameter, yes: yes)])
    }

    /// Yes or no to the whole intent (the conversation is ``ConversationState/Phase/confirming``).
    public func confirm(_ yes: Bool) async throws -> ConversationTurn {
        try await send([.confirmIntent(yes: yes)])
    }

    /// Reads the conversation: its intent, what it asks, its turn.
    public func read() async throws -> ConversationState { try await client.conversation(id) }

    /// Ends the conversation (`cancelled`), and returns it as it ended.
    @discardableResult
    public func end() async throws -> ConversationState { try await client.endConversation(id) }
}
