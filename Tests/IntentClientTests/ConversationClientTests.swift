import ConciergeJSON
import IntentClient
import IntentWire
import Testing

/// The conversation calls against a scripted broker: exactly what goes out on the wire for each turn, that a retried
/// turn goes out again with its same number (and a new request id), and that a turn whose outcome is unknown makes
/// the next turn read the conversation first.
@Suite struct ConversationClientTests {
    static let intent: JSONValue = ["type": "SendMessage", "parameters": ["recipient": ["displayName": "John"]]]

    func client(_ broker: ScriptedBroker) throws -> ConciergeClient {
        try ConciergeClient(configuration: .init(brokerEndpoint: broker.endpoint, heartbeatInterval: .seconds(5)))
    }

    /// The TURNs received so far, as text frames after the signature.
    func turns(_ broker: ScriptedBroker) -> [[String]] {
        broker.messages(CIP.Client.turn).map { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// A `final` REPLY (version 03) to request `id`, with the conversation object at turn `turn`.
    func final(_ broker: ScriptedBroker, _ id: [UInt8], turn: Int, state: String = "asking") {
        let body =
            #"{"intent":{"type":"SendMessage","parameters":{}},"conversation":{"id":"c-1","intentType":"SendMessage","#
            + #""turn":\#(turn),"state":"\#(state)","asking":[{"parameter":"recipient","kind":"disambiguation","#
            + #""options":["a","b"],"asks":1}],"asks":{"recipient":1},"maxAsks":3}}"#
        broker.send([
            CIP.clientSignatureV3.bytes, CIP.Broker.reply.bytes, id, CIP.Status.final.bytes, Array("resolve".utf8),
            Array(body.utf8), [],
        ])
    }

    func error(_ broker: ScriptedBroker, _ id: [UInt8], code: String) {
        broker.send([
            CIP.clientSignatureV3.bytes, CIP.Broker.reply.bytes, id, CIP.Status.error.bytes, [],
            Array(#"{"code":"\#(code)","message":"scripted"}"#.utf8), [],
        ])
    }

    @Test func aTurnRefusedBusyGoesOutAgainWithItsSameNumberUnderANewRequestID() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let start = Task {
            try await client.startConversation(
                intent: Self.intent, id: "c-1", flags: [.record, .confirmBeforeHandle],
                retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1)))
        }
        let first = try await broker.waitFor(CIP.Client.turn)[0]
        // [CIPC03, TURN, request id, conversation id, turn, deadline, body, flags]
        #expect(first.count == 8)
        #expect(turns(broker)[0][3...5] == ["c-1", "1", ""])
        #expect(
            turns(broker)[0][6]
                == #"{"intent":{"parameters":{"recipient":{"displayName":"John"}},"type":"SendMessage"}}"#)
        #expect(turns(broker)[0][7] == "record confirm")
        error(broker, first[2], code: "busy")
        let again = try await broker.waitFor(CIP.Client.turn, count: 2)[1]
        #expect(again[4] == first[4], "a retried turn keeps its number")
        #expect(again[2] != first[2], "each attempt has a request id of its own")
        #expect(again[6] == first[6] && again[7] == first[7])
        final(broker, again[2], turn: 1)
        let turn = try await start.value
        #expect(turn.number == 1 && turn.reply.attempts == 2)
        #expect(turn.asking.map(\.parameter) == ["recipient"])
        #expect(turn.asking.first?.options == ["a", "b"])

        // The next turn is 2, and sends only the answer (no flags after turn 1).
        let answer = Task { try await turn.conversation.choose("recipient", option: 1) }
        let second = try await broker.waitFor(CIP.Client.turn, count: 3)[2]
        #expect(turns(broker)[2][3...7] == ["c-1", "2", "", #"{"option":1,"parameter":"recipient"}"#, ""])
        final(broker, second[2], turn: 2, state: "ended")
        let ended = try await answer.value
        #expect(ended.number == 2 && ended.isEnded)
    }

    @Test func aTurnWhoseOutcomeIsUnknownMakesTheNextTurnReadTheConversationFirst() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let start = Task { try await client.startConversation(intent: Self.intent, id: "c-1") }
        let first = try await broker.waitFor(CIP.Client.turn)[0]
        final(broker, first[2], turn: 1)
        _ = try await start.value

        // Turn 2 ends in an error the broker wrote without the conversation object: did it run? Unknown.
        let answer = Task { try await client.choose(conversation: "c-1", parameter: "recipient", option: 0) }
        let second = try await broker.waitFor(CIP.Client.turn, count: 2)[1]
        error(broker, second[2], code: "internal")
        do {
            _ = try await answer.value
            Issue.record("turn 2 succeeded")
        } catch let error as ClientError {
            #expect(error.code.rawValue == "internal" && error.reply != nil)
        }

        // The next answer reads the conversation first; the broker says turn 2 ran, so it goes out as turn 3.
        let next = Task { try await client.answer(conversation: "c-1", parameter: "recipient", value: "John Doe") }
        let read = try await broker.waitFor(CIP.Client.conversation)[0]
        #expect(read.map { String(decoding: $0, as: UTF8.self) } == ["CIPC03", "CONVERSATION", "c-1"])
        #expect(broker.messages(CIP.Client.turn).count == 2, "the turn waits for the read")
        broker.send([
            CIP.clientSignatureV3.bytes, CIP.Broker.conversation.bytes, Array("c-1".utf8), CIP.Status.final.bytes, [],
            Array(#"{"id":"c-1","intentType":"SendMessage","turn":2,"state":"asking","intent":{}}"#.utf8), [],
        ])
        let third = try await broker.waitFor(CIP.Client.turn, count: 3)[2]
        #expect(String(decoding: third[4], as: UTF8.self) == "3")
        final(broker, third[2], turn: 3, state: "ended")
        #expect(try await next.value.number == 3)
    }

    @Test func aSecondTurnWhileOneIsInFlightIsRefusedUnsent() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let start = Task { try await client.startConversation(intent: Self.intent, id: "c-1") }
        let first = try await broker.waitFor(CIP.Client.turn)[0]
        do {
            _ = try await client.choose(conversation: "c-1", parameter: "recipient", option: 0)
            Issue.record("a second turn went out while turn 1 was in flight")
        } catch let error as ClientError {
            #expect(error.code == .turnInFlight)
        }
        #expect(broker.messages(CIP.Client.turn).count == 1)
        final(broker, first[2], turn: 1)
        _ = try await start.value
    }

    @Test func aBadConversationIDIsRefusedUnsent() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        for id in ["", "has space", String(repeating: "x", count: 256), "é"] {
            do {
                _ = try await client.startConversation(intent: Self.intent, id: id)
                Issue.record("conversation id \(id) was accepted")
            } catch let error as ClientError {
                #expect(error.code == .badConversationID)
            }
        }
        try await client.ping()
        #expect(broker.messages(CIP.Client.turn).isEmpty)
    }
}
