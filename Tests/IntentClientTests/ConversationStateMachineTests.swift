import IntentWire
import Logging
import Testing

@testable import IntentClient

/// The client's conversation rules in its state machine, without sockets: a TURN is kept and answered like a
/// REQUEST (by request id), reads and ENDs are answered by the CONVERSATION answer about their conversation (in
/// order, never by a REPLY), they are sent again after a reconnect, and a broker without `CIPC03` fails them.
@Suite struct ConversationStateMachineTests {
    var rules = ClientStateMachineTests()

    static func turn(_ id: String, conversation: String = "c-1", turn: Int, body: String = #"{"option":0}"#)
        -> [[UInt8]]
    {
        var list = WireFrameList()
        ClientMessageEncoder.turn(
            into: &list, requestID: id, conversationID: conversation, turn: turn, deadlineMilliseconds: nil,
            body: .bytes(Array(body.utf8)))
        return list.frames
    }

    static func conversation(_ id: String, _ status: Reply.Status, body: String = #"{"id":"c-1","turn":1}"#) -> Reply {
        Reply(requestID: id, status: status, phase: "", body: Array(body.utf8))
    }

    mutating func sendTurn(_ id: String, stream: Int, turn: Int, type: String? = "SendMessage") {
        rules.machine.commands(
            [
                .turn(
                    id: id, serial: UInt64(stream), frames: Self.turn(id, turn: turn), intentType: type, stream: stream)
            ],
            now: ClientStateMachineTests.start, connection: &rules.connection)
    }

    mutating func ask(_ id: String, end: Bool = false, waiter: Int) {
        rules.machine.commands(
            [.conversation(id: id, end: end, waiter: waiter)], now: ClientStateMachineTests.start,
            connection: &rules.connection)
    }

    @Test mutating func aTurnGoesOutAsCIPC03AndItsRepliesAreMatchedByRequestIDLikeARequests() {
        sendTurn("r1", stream: 1, turn: 2)
        #expect(rules.connection.take() == [#"CIPC03 TURN r1 c-1 2  {"option":0} "#])
        rules.machine.received(ClientStateMachineTests.reply("r1", .progress), isStatus: false, now: 0)
        rules.machine.received(ClientStateMachineTests.reply("r1", .final), isStatus: false, now: 0)
        #expect(rules.actions() == ["yield 1 progress", "yield 1 final", "finish 1"])
        #expect(!rules.machine.isBusy)
    }

    @Test mutating func readsAndEndsAreAnsweredInOrderByTheConversationAnswerAboutTheirConversation() {
        ask("c-1", waiter: 1)
        ask("c-1", end: true, waiter: 2)
        ask("c-2", waiter: 3)
        #expect(rules.connection.take() == ["CIPC03 CONVERSATION c-1", "CIPC03 END c-1", "CIPC03 CONVERSATION c-2"])
        // A REPLY whose request id happens to be a conversation id answers none of them.
        rules.machine.received(ClientStateMachineTests.reply("c-1", .final), isStatus: false, now: 0)
        #expect(rules.actions().isEmpty)
        rules.machine.receivedConversation(Self.conversation("c-2", .final), now: 0)
        rules.machine.receivedConversation(Self.conversation("c-1", .final), now: 0)
        rules.machine.receivedConversation(Self.conversation("c-1", .error), now: 0)
        #expect(rules.actions() == ["resume 3 final", "resume 1 final", "resume 2 error"])
        // An answer nobody waits for is ignored.
        rules.machine.receivedConversation(Self.conversation("c-1", .final), now: 0)
        #expect(rules.actions().isEmpty)
        #expect(!rules.machine.isBusy)
    }

    @Test mutating func readsAndEndsOfALostConnectionAreSentAgainOnceTheNextHandshakeSucceeds() {
        rules.event(.handshakeSucceeded)
        ask("c-1", waiter: 1)
        ask("c-1", end: true, waiter: 2)
        _ = rules.connection.take()
        rules.event(.disconnected)
        rules.event(.handshakeSucceeded)
        #expect(rules.connection.take() == ["CIPC03 CONVERSATION c-1", "CIPC03 END c-1"])
        rules.machine.receivedConversation(Self.conversation("c-1", .final), now: 0)
        #expect(rules.actions() == ["resume 1 final"])
    }

    @Test mutating func aBrokerWithoutCIPC03FailsTheConversationsButNotTheRequests() {
        rules.send("r0", stream: 9)
        sendTurn("r1", stream: 1, turn: 1)
        ask("c-1", waiter: 2)
        // The answer to a version it does not speak: CIPC01, F2 empty.
        rules.machine.received(ClientStateMachineTests.error("", .unsupportedVersion), isStatus: false, now: 0)
        #expect(
            rules.actions().sorted() == ["finish 1 conversations-unsupported", "resume 2 conversations-unsupported"])
        #expect(rules.machine.pending.keys.sorted() == ["r0"])
        // A broker that knows CIPC03 but serves no conversations answers unknown-command, F2 empty.
        ask("c-1", waiter: 3)
        rules.machine.received(ClientStateMachineTests.error("", .unknownCommand), isStatus: false, now: 0)
        #expect(rules.actions() == ["resume 3 conversations-unsupported"])
    }

    @Test mutating func aTurnRefusedBusyWithPushbackHoldsBackLaterTurnsOfItsIntentTypeUnsent() {
        rules.event(.handshakeSucceeded)
        sendTurn("r1", stream: 1, turn: 1)
        rules.machine.received(
            ClientStateMachineTests.error("r1", .busy, extra: #","pushback_rate":1,"pushback_ms":60000"#),
            isStatus: false, now: ClientStateMachineTests.start)
        _ = rules.actions()
        _ = rules.connection.take()
        for index in 2...5 { sendTurn("r\(index)", stream: index, turn: 1) }
        let refused = rules.actions().filter { $0.hasSuffix("throttled") }
        #expect(refused.count >= 3)
        #expect(rules.connection.take().count + refused.count == 4)
    }

    @Test mutating func closingFailsTheReadsAndEndsWaiting() {
        ask("c-1", waiter: 1)
        sendTurn("r1", stream: 2, turn: 1)
        rules.machine.close()
        #expect(rules.actions().sorted() == ["finish 2 closed", "resume 1 closed"])
    }
}
