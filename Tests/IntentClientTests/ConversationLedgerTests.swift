import ConciergeJSON
import Testing

@testable import IntentClient

/// The client's turn numbers, without sockets: a new turn is the one after the last the broker counted, a turn in
/// flight refuses another, the broker's count (the `"conversation"` object of every turn's ending) wins, and an
/// unknown outcome makes the next turn read the conversation first.
@Suite struct ConversationLedgerTests {
    var ledger = ConversationLedger()

    static func final(turn: Int?, id: String = "c-1", state: String = "asking") -> Reply {
        let conversation = turn.map { #","conversation":{"id":"\#(id)","turn":\#($0),"state":"\#(state)"}"# } ?? ""
        return Reply(
            requestID: "r", status: .final, phase: "resolve", body: Array(#"{"intent":{}\#(conversation)}"#.utf8))
    }

    static func error(_ code: String, turn: Int? = nil) -> Reply {
        let conversation = turn.map { #","conversation":{"id":"c-1","turn":\#($0),"state":"asking"}"# } ?? ""
        return Reply(
            requestID: "r", status: .error, phase: "",
            body: Array(#"{"code":"\#(code)","message":"m"\#(conversation)}"#.utf8))
    }

    @Test mutating func turnsAreNumberedFromOneAndEachNewTurnIsTheOneAfterTheLastCounted() throws {
        #expect(try ledger.begin("c-1", starting: true) == .send(turn: 1))
        ledger.ended("c-1", turn: 1, reply: Self.final(turn: 1))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 2))
        ledger.ended("c-1", turn: 2, reply: Self.final(turn: 2))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 3))
        // Another conversation has numbers of its own.
        #expect(try ledger.begin("c-2", starting: true) == .send(turn: 1))
    }

    @Test mutating func aConversationHasOneTurnAtATime() throws {
        _ = try ledger.begin("c-1", starting: true)
        do {
            _ = try ledger.begin("c-1", starting: false)
            Issue.record("a second turn began while turn 1 was in flight")
        } catch {
            #expect(error.code == .turnInFlight)
        }
        ledger.ended("c-1", turn: 1, reply: Self.final(turn: 1))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 2))
    }

    @Test mutating func aRefusedTurnIsNotCountedAndTheNextTurnHasItsNumber() throws {
        _ = try ledger.begin("c-1", starting: true)
        ledger.ended("c-1", turn: 1, reply: Self.final(turn: 1))
        _ = try ledger.begin("c-1", starting: false)
        ledger.ended("c-1", turn: 2, reply: Self.error("not-asked"))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 2))
        ledger.ended("c-1", turn: 2, reply: Self.error("bad-option"))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 2))
    }

    @Test mutating func theBrokersCountInTheEndingWins() throws {
        _ = try ledger.begin("c-1", starting: true)
        ledger.ended("c-1", turn: 1, reply: Self.final(turn: 1))
        _ = try ledger.begin("c-1", starting: false)
        // An error after the turn ran (a worker's invalid-type, say) that the broker did not count: its object says 1.
        ledger.ended("c-1", turn: 2, reply: Self.error("invalid-type", turn: 1))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 2))
        // Another instance of the client answered in between: the broker says 4.
        ledger.ended("c-1", turn: 2, reply: Self.error("turn-mismatch", turn: 4))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 5))
    }

    @Test mutating func anUnknownOutcomeMakesTheNextTurnReadTheConversationFirst() throws {
        _ = try ledger.begin("c-1", starting: true)
        ledger.ended("c-1", turn: 1, reply: Self.final(turn: 1))
        _ = try ledger.begin("c-1", starting: false)
        // The connection was lost (or the caller stopped waiting): turn 2 may have run.
        ledger.ended("c-1", turn: 2, reply: nil)
        #expect(try ledger.begin("c-1", starting: false) == .read)
        // Sending 2 again with a new answer would get turn 2's stored reply: the read says 2 ran.
        ledger.learned(try #require(ConversationState(json: ["id": "c-1", "turn": 2, "state": "asking"])))
        #expect(try ledger.begin("c-1", starting: false) == .send(turn: 3))
        // An error the broker wrote without the object, not a refusal: unknown too.
        ledger.ended("c-1", turn: 3, reply: Self.error("worker-lost"))
        #expect(try ledger.begin("c-1", starting: false) == .read)
    }

    @Test mutating func aConversationThisClientNeverTalkedInIsReadBeforeItsFirstAnswer() throws {
        #expect(try ledger.begin("c-9", starting: false) == .read)
        ledger.learned(try #require(ConversationState(json: ["id": "c-9", "turn": 3, "state": "asking"])))
        #expect(try ledger.begin("c-9", starting: false) == .send(turn: 4))
    }

    @Test mutating func theEndingOfAnOlderTurnNumberDoesNotSettleTheTurnInFlight() throws {
        _ = try ledger.begin("c-1", starting: true)
        ledger.ended("c-1", turn: 7, reply: Self.final(turn: 7))
        #expect(ledger.entries["c-1"]?.inFlight == 1)
    }
}
