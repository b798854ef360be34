import ConciergeExamples
import ConciergeJSON
import IntentTranscript
import Testing

/// Coverage counts what the transcripts exercised, per intent type.
@Suite struct TranscriptCoverageTests {
    @Test func coverageCountsParametersKindsCodesAndEndings() async throws {
        let ended = try await SendMessageConversation.transcript(on: Examples.provider)
        let open = try Transcript(records: Array(ended.records.prefix(4)))  // start, turn 1, its phase and reply
        let coverage = TranscriptCoverage([ended, open])
        #expect(coverage.transcripts == 2)
        #expect(coverage.endings == ["completed": 1, "open": 1])
        let intent = try #require(coverage.intents["SendMessage"])
        #expect(intent.conversations == 2 && intent.phases == 5)
        #expect(intent.parameters["recipient"] == ["disambiguation": 2, "success": 1])
        #expect(intent.parameters["content"] == ["success": 3])
        #expect(intent.parameters["attachments"] == ["notRequired": 3])
        #expect(intent.confirmCodes == ["ready": 1])
        #expect(intent.handleCodes == ["success": 1])
        #expect(intent.errorCodes.isEmpty)
        #expect(
            coverage.description == """
                2 transcripts, 1 intent type; endings: completed 1, open 1

                SendMessage: 2 conversations, 5 phases; endings: completed 1, open 1
                  parameters:
                    attachments: notRequired 3
                    content: success 3
                    recipient: disambiguation 2, success 1
                  confirm codes: ready 1
                  handle codes: success 1
                """)
        #expect(coverage.jsonValue["intents"]?["SendMessage"]?["parameters"]?["recipient"]?["disambiguation"] == 2)
        #expect(coverage.jsonValue["endings"] == ["completed": 1, "open": 1])
    }
}
