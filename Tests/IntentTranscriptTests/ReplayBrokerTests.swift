import ConciergeJSON
import Foundation
import IntentTranscript
import IntentTranscriptReplay
import IntentWire
import Synchronization
import Testing
import ZeroMQ

/// The live-broker target against a scripted broker (a ROUTER in the test answering each `CIPC03` TURN as a broker
/// would): every recorded turn goes out once, as a new conversation with the recorded turn numbers and bodies, and
/// each REPLY is compared with the recorded one, leaving out the fresh conversation id.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ReplayBrokerTests {
    /// The turns the scripted broker received.
    final class Received: Sendable {
        let turns = Mutex<[ClientTurn]>([])
        let bodies = Mutex<[JSONValue]>([])
        let stop = Mutex(false)
    }

    /// Answers TURNs with the transcript's replies (its conversation's id replaced by the new one, its
    /// `expiresInMs` changed, and `handle.code` replaced by `handleCode` when given) until `received.stop` is set.
    static func serve(_ socket: ZMQSocket, _ transcript: Transcript, received: Received, handleCode: String?) async {
        let replies = Dictionary(uniqueKeysWithValues: transcript.replies.map { ($0.turn, $0) })
        while !received.stop.withLock({ $0 }) {
            guard let message = try? socket.receiveMultipart(dontWait: true) else {
                try? await Task.sleep(for: .milliseconds(1))
                continue
            }
            guard case .turn(let turn)? = try? ClientMessageDecoder().decode(Array(message.dropFirst())),
                let recorded = replies[turn.turn], case .object(var body) = recorded.body
            else { continue }
            received.turns.withLock { $0.append(turn) }
            received.bodies.withLock { $0.append((try? JSONValue.parse(message[7])) ?? .null) }
            var conversation = body["conversation"]?.objectValue ?? [:]
            conversation["id"] = .string(turn.conversationName)
            conversation["recording"] = false
            if conversation["expiresInMs"] != nil { conversation["expiresInMs"] = 123 }
            body["conversation"] = .object(conversation)
            if let handleCode, case .object(var handle)? = body["handle"] {
                handle["code"] = .string(handleCode)
                body["handle"] = .object(handle)
            }
            let frames: [[UInt8]] = [
                message[0], Array("CIPC03".utf8), Array("REPLY".utf8), turn.requestID, Array(recorded.status.utf8),
                Array(recorded.phase.utf8), JSONValue.object(body).serialized(), [],
            ]
            _ = try? socket.send(multipart: frames)
        }
    }

    static func replay(handleCode: String? = nil) async throws -> (TranscriptReplayReport, Received) {
        let transcript = try Transcript.load(Fixture.sendMessage)
        let context = ZMQContext()
        let socket = try ZMQSocket(context: context, type: .router)
        try socket.setOption(.linger, 0)
        let path =
            FileManager.default.temporaryDirectory.path + "/replay-broker-\(getpid())-"
            + String(UInt32.random(in: 0...UInt32.max))
        let endpoint = "ipc://" + path
        try socket.bind(endpoint)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let received = Received()
        let broker = Task { await serve(socket, transcript, received: received, handleCode: handleCode) }
        let result: Result<TranscriptReplayReport, any Error>
        do {
            let connection = try ReplayBrokerConnection(endpoint: endpoint)
            connection.turnTimeout = .seconds(20)
            result = .success(try await connection.replay(transcript, ignoring: ["**.data.messageId"]))
            connection.close()
        } catch {
            result = .failure(error)
        }
        // The scripted broker stops before its socket is closed, whatever the replay did.
        received.stop.withLock { $0 = true }
        await broker.value
        socket.close()
        context.terminate()
        let report = try result.get()
        return (report, received)
    }

    @Test func eachRecordedTurnIsSentOnceAsANewConversationAndTheRepliesMatch() async throws {
        let (report, received) = try await Self.replay()
        #expect(report.mismatches.isEmpty, "\(report)")
        #expect(report.description.hasSuffix(": ok (2 turns)"))
        let turns = received.turns.withLock { $0 }
        #expect(turns.map(\.turn) == [1, 2])
        #expect(Set(turns.map(\.conversationName)).count == 1)
        #expect(turns[0].conversationName != "c-send-1" && turns[0].conversationName.hasPrefix("replay-"))
        #expect(turns[0].flags == [])  // `record` is not sent again: a replay is not recorded
        #expect(received.bodies.withLock { $0 } == (try Transcript.load(Fixture.sendMessage)).turns.map(\.sent))
    }

    @Test func aBrokerAnsweringOtherwiseIsADiffOfTheReply() async throws {
        let (report, _) = try await Self.replay(handleCode: "failure")
        #expect(report.mismatches.map(\.path) == ["handle.code"])
        #expect(
            report.description.hasSuffix(
                """
                turn 2, reply, body: handle.code
                - recorded: "success"
                + replayed: "failure"
                """))
    }
}
