public import ConciergeJSON

/// The ending of one conversation turn: the broker's `final` REPLY (an Interaction, as a request's), and the
/// conversation as it stands after the turn (the reply's `"conversation"` object).
///
/// A turn that the broker answers with an error throws ``ClientError`` instead (its ``ClientError/code`` is the
/// broker's code, its ``ClientError/conversation`` the conversation, when the broker names it).
public struct ConversationTurn: Sendable {
    /// The conversation, to send the next answer with.
    public let conversation: Conversation
    /// The turn's number (1 for the turn that started the conversation).
    public let number: Int
    /// The turn's final reply (``Reply/isReplay`` when a retry of the turn got the broker's stored reply).
    public let reply: Reply
    /// The conversation after the turn: what it asks now, or how it ended (nil only if the broker left it out).
    public let state: ConversationState?

    /// The reply's body: the Interaction (`intent`, and `resolve`, `confirm`, `handle` as far as the turn ran).
    public var interaction: JSONValue { reply.json ?? .null }

    /// What the conversation asks now (empty when it waits for a confirm of the whole intent, or ended).
    public var asking: [ConversationState.Ask] { state?.asking ?? [] }

    /// Whether the conversation ended with this turn (``ConversationState/ending`` says how).
    public var isEnded: Bool { state?.isEnded ?? false }

    /// Whether the conversation waits for a yes or no to the whole intent (``Conversation/confirm(_:)``).
    public var isConfirming: Bool { state?.phase == .confirming }
}
