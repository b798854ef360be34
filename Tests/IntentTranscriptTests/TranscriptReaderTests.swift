import ConciergeJSON
import IntentTranscript
import Testing

/// Reading a whole file: a conversation's order, errors with their line numbers, and files of conversations that
/// are open or were cut by a crash.
@Suite struct TranscriptReaderTests {
    static let at = "2026-11-28T12:00:00.000Z"
    static let start = TranscriptRecord.start(
        .init(conversation: "c-1", intentType: "Echo", at: at, flags: [], maxAsks: 3))
    static let turn = TranscriptRecord.turn(.init(turn: 1, requestID: "r1", sent: ["intent": ["type": "Echo"]], at: at))
    static let end = TranscriptRecord.end(.init(ending: "completed", turns: 1, at: at))

    static func bytes(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) }

    @Test func aFileWithoutEndIsAnOpenConversation() throws {
        let transcript = try Transcript(jsonLines: Self.bytes([Self.start.jsonLine(), Self.turn.jsonLine(), ""]))
        #expect(transcript.records == [Self.start, Self.turn])
        #expect(!transcript.isEnded && transcript.end == nil && transcript.cutLine == nil)
        #expect(transcript.start.intentType == "Echo")
        #expect(transcript.turns.count == 1)
    }

    @Test func aLastLineCutWhileWrittenIsLeftOutAndNamed() throws {
        let cut = String(Self.end.jsonLine().prefix(20))
        let transcript = try Transcript(jsonLines: Self.bytes([Self.start.jsonLine(), Self.turn.jsonLine(), cut]))
        #expect(transcript.records == [Self.start, Self.turn])
        #expect(transcript.cutLine == 3)
    }

    @Test func aBadLineInTheMiddleIsAnErrorWithItsLineNumberAndCRLFIsRead() throws {
        let lines = [Self.start.jsonLine(), Self.turn.jsonLine(), #"{"record":"turn","turn":1}"#, Self.end.jsonLine()]
        #expect {
            try Transcript(jsonLines: Self.bytes(lines), path: "t.jsonl")
        } throws: { error in
            guard let error = error as? TranscriptError else { return false }
            return error.code == .missingField && error.line == 3 && error.description.hasPrefix("t.jsonl:3: ")
        }
        let crlf = try Transcript(
            jsonLines: Array((Self.start.jsonLine() + "\r\n" + Self.end.jsonLine() + "\r\n").utf8))
        #expect(crlf.isEnded)
    }

    @Test func recordsOutOfAConversationsOrderAreRefused() {
        for (lines, line) in [
            ([Self.turn.jsonLine(), Self.end.jsonLine()], 1),
            ([Self.start.jsonLine(), Self.start.jsonLine()], 2),
            ([Self.start.jsonLine(), Self.end.jsonLine(), Self.turn.jsonLine()], 3),
        ] {
            #expect {
                try Transcript(jsonLines: Self.bytes(lines))
            } throws: { error in
                (error as? TranscriptError)?.code == .outOfOrder && (error as? TranscriptError)?.line == line
            }
        }
        #expect(throws: TranscriptError.self) { try Transcript(jsonLines: []) }
    }

    @Test func aMissingFileIsAnIOError() {
        #expect {
            try Transcript.load("/nonexistent/transcript.jsonl")
        } throws: { error in
            (error as? TranscriptError)?.code == .io && "\(error)".contains("No such file")
        }
    }
}
