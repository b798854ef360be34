public import IntentKit

/// Handles ``SendMessageIntent`` against the demo contacts (see ``DemoData``).
///
/// Resolution: `recipient` through ``DemoData/resolveContact(_:)`` (success with `customIdentifier` written back,
/// disambiguation for "John", confirmation of the favourite for "Kate", `unsupported(noContactFound)`, `needsValue`);
/// `content` missing or blank -> `needsValue`; `attachments` -> `notRequired` (the demo sends text only).
/// Handle: `success` with a `messageId`, or `failure` when the recipient or content is missing.
public struct SendMessageHandler: IntentHandler {
    /// Creates a handler.
    public init() {}

    public func resolve(intent: SendMessageIntent, context: HandlerContext) async throws -> Resolutions<
        SendMessageIntent
    > {
        var resolutions = Resolutions<SendMessageIntent>()
        resolutions[\.recipient] = DemoData.resolveContact(intent.recipient)
        if let content = intent.content, content.contains(where: { !$0.isWhitespace }) {
            resolutions[\.content] = .success(content)
        } else {
            resolutions[\.content] = .needsValue
        }
        resolutions[\.attachments] = .notRequired
        return resolutions
    }

    public func handle(intent: SendMessageIntent, context: HandlerContext) async throws -> HandleResponse<
        SendMessageIntent
    > {
        guard case .success(let recipient) = DemoData.resolveContact(intent.recipient) else {
            return HandleResponse(code: .failure, message: "the recipient is missing or not a unique contact")
        }
        guard let content = intent.content, !content.isEmpty else {
            return HandleResponse(code: .failure, message: "the message has no content")
        }
        return HandleResponse(
            code: .success,
            data: [
                "messageId": .string(DemoData.nextID("msg")),
                "recipient": .string(recipient.customIdentifier ?? recipient.displayName),
            ]
        )
    }
}
