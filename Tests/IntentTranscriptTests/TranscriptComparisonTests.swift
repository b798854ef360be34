import ConciergeJSON
import IntentTranscript
import Testing

/// The comparison leaves out exactly what legitimately varies (a record's times, durations, ids, worker and attempt;
/// `conversation.expiresInMs`; the paths given), and names every other difference by turn, phase and key path.
@Suite struct TranscriptComparisonTests {
    static let output: JSONValue = [
        "intent": ["type": "SendMessage", "parameters": ["content": "Hi"]],
        "handle": ["code": "success", "data": ["messageId": "msg-1", "recipient": "contact-john-appleseed"]],
    ]
    static let recorded = TranscriptRecord.Phase(
        turn: 2, phase: "handle", worker: "w1", attempt: 1, input: ["intent": ["type": "SendMessage"]],
        outcome: "stop", output: output, ms: 1.5)
    static let reply = TranscriptRecord.Reply(
        turn: 2, status: "final", phase: "handle",
        body: ["handle": ["code": "success"], "conversation": ["state": "ended", "expiresInMs": 1000]], ms: 3)

    static func changing(_ value: JSONValue, _ path: [String], to new: JSONValue?) -> JSONValue {
        guard let key = path.first, case .object(var object) = value else { return new ?? .null }
        if path.count == 1 {
            object[key] = new
        } else {
            object[key] = changing(object[key] ?? [:], Array(path.dropFirst()), to: new)
        }
        return .object(object)
    }

    @Test func theSameAnswersMatchWhateverTheRecordsTimesIdsWorkerAndAttempt() {
        var comparison = TranscriptComparison()
        // The record's own at, ms, requestId, worker and attempt are not part of what is compared at all.
        comparison.compare(Self.recorded, outcome: "stop", output: Self.output)
        comparison.compare(
            Self.reply, status: "final", phase: "handle",
            body: Self.changing(Self.reply.body, ["conversation", "expiresInMs"], to: 299_000))
        #expect(comparison.isMatch)
        #expect(comparison.comparedRecords == 2)
        #expect(comparison.description == "ok")
        #expect(TranscriptComparison.alwaysIgnored == ["conversation.expiresInMs"])
    }

    @Test func aChangedFieldIsOneMismatchWithAReadableDiff() {
        var comparison = TranscriptComparison()
        comparison.compare(
            Self.recorded, outcome: "stop",
            output: Self.changing(Self.output, ["handle", "data", "recipient"], to: "contact-john-smith"))
        #expect(comparison.mismatches.count == 1)
        #expect(comparison.mismatches.first?.path == "handle.data.recipient")
        #expect(
            comparison.description == """
                turn 2, handle, output: handle.data.recipient
                - recorded: "contact-john-appleseed"
                + replayed: "contact-john-smith"
                """)
    }

    @Test func aStateOtherThanExpiresInMsInTheConversationIsCompared() {
        var comparison = TranscriptComparison()
        comparison.compare(
            Self.reply, status: "error", phase: "handle",
            body: Self.changing(Self.reply.body, ["conversation", "state"], to: "asking"))
        #expect(comparison.mismatches.map(\.part) == ["status", "body"])
        #expect(comparison.mismatches.map(\.path) == ["", "conversation.state"])
        #expect(comparison.description.hasPrefix("turn 2, reply, status\n- recorded: \"final\"\n+ replayed: \"error\""))
    }

    @Test func givenPathsAndWhatIsUnderThemAreIgnoredAndAStarMatchesOneKey() {
        let changed = Self.changing(Self.output, ["handle", "data", "messageId"], to: "msg-99")
        var plain = TranscriptComparison()
        plain.compare(Self.recorded, outcome: "stop", output: changed)
        #expect(plain.mismatches.map(\.path) == ["handle.data.messageId"])
        for paths in [["handle.data.messageId"], ["handle.data"], ["*.data.messageId"], ["**.messageId"], ["**"]] {
            var ignoring = TranscriptComparison(ignoring: paths)
            ignoring.compare(Self.recorded, outcome: "stop", output: changed)
            #expect(ignoring.isMatch, "\(paths)")
        }
        var other = TranscriptComparison(
            ignoring: ["handle.data.recipient", "handle.data.messageIdentifier", "data.**", "*.messageId"])
        other.compare(Self.recorded, outcome: "stop", output: changed)
        #expect(!other.isMatch)
    }

    @Test func anOutcomeAMissingKeyAndAnArrayOfAnotherLengthAreEachNamed() throws {
        var comparison = TranscriptComparison()
        let recorded = TranscriptRecord.Phase(
            turn: 1, phase: "resolve", worker: "w", attempt: 1, input: [:], outcome: "stop",
            output: ["resolve": ["options": [1, 2]], "note": "x"], ms: 0)
        comparison.compare(recorded, outcome: "continue", output: ["resolve": ["options": [1]]])
        try #require(comparison.mismatches.count == 3)
        #expect(comparison.mismatches.map(\.part) == ["outcome", "output", "output"])
        #expect(comparison.mismatches.map(\.path) == ["", "note", "resolve.options.1"])
        #expect(comparison.mismatches[1].replayed == nil)
        #expect(comparison.mismatches[1].description.hasSuffix("+ replayed: (absent)"))
    }
}
