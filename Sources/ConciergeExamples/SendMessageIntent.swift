public import IntentKit

/// Send a message to a contact (SiriKit's `INSendMessageIntent`).
public struct SendMessageIntent: Intent, Hashable {
    public static let intentType = "SendMessage"
    public static let intentDescription = "Send a text message to one contact."
    public static let parameters: [IntentParameter<SendMessageIntent>] = [
        .init(
            "recipient", \.recipient, required: true,
            description: "Who receives the message, matched against the contacts.",
            unsupportedReasons: ContactUnsupportedReason.allCases.map(\.rawValue)
        ),
        .init("content", \.content, required: true, description: "The text of the message."),
        .init("attachments", \.attachments, description: "Names of files to attach (ignored by the demo)."),
    ]

    public var identifier: String?
    /// Who receives the message.
    public var recipient: Person?
    /// The text of the message.
    public var content: String?
    /// Names of files to attach.
    public var attachments: [String]?

    public init() {}

    /// Creates an intent with the given parameters.
    public init(recipient: Person? = nil, content: String? = nil, attachments: [String]? = nil) {
        self.recipient = recipient
        self.content = content
        self.attachments = attachments
    }
}
