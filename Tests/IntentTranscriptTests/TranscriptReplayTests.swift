import ConciergeExamples
import ConciergeJSON
import IntentKit
import IntentTesting
import IntentTranscript
import Testing

/// SendMessage with a changed handle: the recipient's message is not sent (a regression a replay must catch).
struct ChangedSendMessageHandler: IntentHandler {
    func resolve(intent: SendMessageIntent, context: HandlerContext) async throws -> Resolutions<SendMessageIntent> {
        try await SendMessageHandler().resolve(intent: intent, context: context)
    }

    func handle(intent: SendMessageIntent, context: HandlerContext) async throws -> HandleResponse<SendMessageIntent> {
        HandleResponse(code: .failure, message: "the message service is down")
    }
}

/// The handler test kit's replay (IntentTesting's ``TranscriptReplay``): a conversation recorded from the examples
/// replays green against them, and red, with a diff naming the changed fields, against a changed handler.
@Suite struct TranscriptReplayTests {
    /// The id the example handler makes anew for every message sent (in the handle data and in the default user
    /// activity's copy of the response).
    static let ignored = ["**.data.messageId"]

    @Test func aRecordedConversationReplaysGreenAgainstTheSameHandlers() async throws {
        let transcript = try await SendMessageConversation.transcript(on: Examples.provider)
        #expect(transcript.phases.map(\.phase) == ["resolve", "resolve", "confirm", "handle"])
        #expect(transcript.phases.map(\.outcome) == ["stop", "continue", "continue", "stop"])
        let report = await TranscriptReplay(transcript, ignoring: Self.ignored).run(on: Examples.provider)
        #expect(report.mismatches.isEmpty, "\(report)")
        #expect(report.description == "c-send-1: ok (4 phases)")
    }

    @Test func withoutIgnoringTheMessageIdTheReplayShowsIt() async throws {
        let transcript = try await SendMessageConversation.transcript(on: Examples.provider)
        let report = await TranscriptReplay(transcript).run(on: Examples.provider)
        #expect(
            report.mismatches.map(\.path) == [
                "handle.data.messageId", "handle.userActivity.userInfo.interaction.response.data.messageId",
            ])
    }

    @Test func aChangedHandlerReplaysRedWithADiffOfWhatChanged() async throws {
        let transcript = try await SendMessageConversation.transcript(on: Examples.provider)
        var changed = Examples.provider
        changed.register { ChangedSendMessageHandler() }
        let report = await TranscriptReplay(transcript, ignoring: Self.ignored).run(on: changed)
        #expect(!report.isMatch)
        #expect(report.mismatches.allSatisfy { $0.turn == 2 && $0.phase == "handle" })
        #expect(report.mismatches.map(\.path).contains("handle.code"))
        #expect(
            report.description.contains(
                """
                turn 2, handle, output: handle.code
                - recorded: "success"
                + replayed: "failure"
                """), "\(report)")
        #expect(report.description.hasPrefix("c-send-1: \(report.mismatches.count) mismatches in 4 phases\n"))
    }

    @Test func aTranscriptTheBrokerRecordedReplaysGreen() async throws {
        let transcript = try Transcript.load(Fixture.brokerRecorded)
        #expect(transcript.end?.ending == "completed" && transcript.phases.count == 4)
        let report = await TranscriptReplay(transcript, ignoring: Self.ignored).run(on: Examples.provider)
        #expect(report.mismatches.isEmpty, "\(report)")
        var changed = Examples.provider
        changed.register { ChangedSendMessageHandler() }
        let red = await TranscriptReplay(transcript, ignoring: Self.ignored).run(on: changed)
        #expect(red.mismatches.map(\.path).contains("handle.code"))
    }

    @Test func theCheckedInFixtureReplaysGreenFromItsFile() async throws {
        let replay = try TranscriptReplay(contentsOf: Fixture.sendMessage, ignoring: Self.ignored)
        let report = await replay.run(on: Examples.provider)
        #expect(report.mismatches.isEmpty, "\(report)")
        #expect(report.name == Fixture.sendMessage)
    }
}
