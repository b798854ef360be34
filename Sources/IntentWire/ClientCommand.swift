/// A message from a client that passed the broker's frame checks (`Schemas/PROTOCOL.md` section 4.8, checks 1-10).
public enum ClientCommand: Sendable, Hashable {
    /// REQUEST: run a phase or the lifecycle of an intent.
    case request(ClientRequest)
    /// STATUS: what became of the request with this id (1...255 bytes).
    case status(requestID: [UInt8])
    /// PING: answer PONG.
    case ping
    /// CANCEL (version 02): stop the request with this id (1...255 bytes), section 4.10.2.
    case cancel(requestID: [UInt8])
    /// TURN (version 03): one turn of a conversation, section 4.11.
    case turn(ClientTurn)
    /// CONVERSATION (version 03): read the conversation with this id.
    case readConversation(conversationID: [UInt8])
    /// END (version 03): end the conversation with this id.
    case endConversation(conversationID: [UInt8])
}
