import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentTranscript
import Testing

/// The checked-in fixture is a whole conversation in the format, and what the examples record today.
@Suite struct TranscriptFixtureTests {
    @Test func theFixtureIsTheSendMessageConversation() async throws {
        let generated = try await SendMessageConversation.transcript(on: Examples.provider)
        if ProcessInfo.processInfo.environment["CONCIERGE_WRITE_TRANSCRIPT_FIXTURES"] == "1" {
            try generated.jsonLines.write(toFile: Fixture.sendMessage, atomically: true, encoding: .utf8)
        }
        let fixture = try Transcript.load(Fixture.sendMessage)
        #expect(fixture.records.map(\.kind) == generated.records.map(\.kind))
        #expect(fixture.start.intentType == "SendMessage" && fixture.end?.ending == "completed")
        #expect(fixture.replies.first?.body["resolve"]?["recipient"]?["kind"] == "disambiguation")
        #expect(fixture.replies.last?.body["handle"]?["code"] == "success")
        // Written by this module, so it is byte for byte what the writer writes for its records.
        #expect(try String(contentsOfFile: Fixture.sendMessage, encoding: .utf8) == fixture.jsonLines)
    }
}
