public import ConciergeJSON

/// One answer of a conversation turn (PROTOCOL.md, the Answer body): what the user said to what the conversation
/// asks. A turn sends one answer, or several applied in order (``ConciergeClient/answer(conversation:_:deadline:retry:progress:)``).
public enum ConversationAnswer: Sendable, Hashable {
    /// A value for a parameter the conversation asks about (`needsValue`, `disambiguation`, `confirmationRequired`
    /// or `unsupported`), written into the intent as is; `.null` removes the value. Its type is checked by the worker
    /// when resolve runs (a wrong type is the error `invalid-type`, and the conversation stays as it was).
    case value(parameter: String, JSONValue)
    /// Option `index` (from 0) of the parameter's `disambiguation`.
    case option(parameter: String, index: Int)
    /// Yes or no to the parameter's `confirmationRequired`: yes keeps the value the handler wrote into the intent;
    /// no removes it (the handler then asks again, usually `needsValue`).
    case confirmParameter(parameter: String, yes: Bool)
    /// Yes or no to the whole intent, when the conversation is ``ConversationState/Phase/confirming`` (started with
    /// ``ConversationFlags/confirmBeforeHandle``): yes runs handle; no ends the conversation `declined`.
    case confirmIntent(yes: Bool)

    /// The answer as the broker reads it.
    public var json: JSONValue {
        switch self {
        case .value(let parameter, let value): ["parameter": .string(parameter), "value": value]
        case .option(let parameter, let index): ["parameter": .string(parameter), "option": .int(Int64(index))]
        case .confirmParameter(let parameter, let yes): ["parameter": .string(parameter), "confirm": .bool(yes)]
        case .confirmIntent(let yes): ["confirm": .bool(yes)]
        }
    }

    /// The parameter answered (nil for ``confirmIntent(yes:)``).
    public var parameter: String? {
        switch self {
        case .value(let parameter, _), .option(let parameter, _), .confirmParameter(let parameter, _): parameter
        case .confirmIntent: nil
        }
    }

    /// The body of a turn that sends `answers`: one Answer object, or `{"answers": [...]}` for several.
    static func body(_ answers: [ConversationAnswer]) -> JSONValue {
        answers.count == 1 ? answers[0].json : ["answers": .array(answers.map(\.json))]
    }
}
