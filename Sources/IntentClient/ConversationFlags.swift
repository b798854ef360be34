import IntentWire

/// What a conversation's first turn asks of the broker (the TURN's flags; meaningful on turn 1 only).
public struct ConversationFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Record a transcript of the conversation (`record`), if the broker has a transcript directory
    /// (`--transcripts DIR`).
    public static let record = ConversationFlags(rawValue: 1 << 0)
    /// Stop at a confirm that answers `ready` and wait for a yes to the whole intent before handle (`confirm`), as
    /// Siri asks "Ready to send?": ``Conversation/confirm(_:)``.
    public static let confirmBeforeHandle = ConversationFlags(rawValue: 1 << 1)

    /// The TURN's flags (its F7 words).
    var wire: ClientTurn.Flags {
        var flags: ClientTurn.Flags = []
        if contains(.record) { flags.insert(.record) }
        if contains(.confirmBeforeHandle) { flags.insert(.confirm) }
        return flags
    }
}
