import ConciergeJSON
import Foundation
import IntentTranscript
import Testing

/// The writer the broker uses: file names (escaped id, scope hash), one line per record, never overwriting, and
/// errors reported instead of traps.
@Suite struct TranscriptWriterTests {
    static func directory() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("transcripts-\(UInt32.random(in: 0...UInt32.max))/nested").path
    }

    static func start(_ id: String) -> TranscriptRecord {
        .start(
            .init(conversation: id, intentType: "Echo", at: TranscriptClock.timestamp(), flags: ["record"], maxAsks: 3))
    }

    @Test func theFileNameEscapesTheIdAndEndsWithAHashOfScopeAndId() {
        let name = TranscriptWriter.fileName(conversation: "c/1%x~", scope: [1, 2, 3])
        #expect(name.hasPrefix("c%2F1%25x%7E-"))
        #expect(name.hasSuffix(".jsonl"))
        let hash = name.dropFirst("c%2F1%25x%7E-".count).dropLast(".jsonl".count)
        #expect(hash.count == 8 && hash.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        // Stable across runs (not Swift's seeded Hasher), and different for another client or another id.
        #expect(TranscriptWriter.fileName(conversation: "c-1", scope: Array("client-a".utf8)) == "c-1-8f45fe37.jsonl")
        #expect(
            TranscriptWriter.fileName(conversation: "c-1", scope: Array("client-a".utf8))
                != TranscriptWriter.fileName(conversation: "c-1", scope: Array("client-b".utf8)))
        #expect(TranscriptWriter.fileName(conversation: "Az09._-", scope: []).hasPrefix("Az09._--"))
    }

    @Test func aConversationIsOneFileOfOneLinePerRecordThatReadsBack() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try TranscriptWriter(directory: directory)
        let file = try writer.begin(conversation: "c-1", scope: [7], start: Self.start("c-1"))
        #expect(file.path == directory + "/" + TranscriptWriter.fileName(conversation: "c-1", scope: [7]))
        let turn = TranscriptRecord.turn(
            .init(turn: 1, requestID: "r1", sent: ["intent": ["type": "Echo"]], at: TranscriptClock.timestamp()))
        try writer.append(turn, to: file)
        #expect(writer.openCount == 1)
        let open = try Transcript.load(file.path)  // readable while open: every line is written at once
        #expect(open.records.count == 2 && !open.isEnded)
        try writer.append(.end(.init(ending: "cancelled", turns: 1, at: TranscriptClock.timestamp())), to: file)
        writer.finish(file)
        #expect(writer.openCount == 0)
        let text = try String(contentsOfFile: file.path, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 3 && text.hasSuffix("\n"))
        #expect(try Transcript.load(file.path).end?.ending == "cancelled")
    }

    @Test func anIdUsedAgainGetsANewFileAndTheOldOneStays() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try TranscriptWriter(directory: directory)
        let first = try writer.begin(conversation: "c-1", scope: [7], start: Self.start("c-1"))
        #expect {
            try writer.begin(conversation: "c-1", scope: [7], start: Self.start("c-1"))
        } throws: { ($0 as? TranscriptError)?.code == .alreadyOpen }
        writer.finish(first)
        let second = try writer.begin(conversation: "c-1", scope: [7], start: Self.start("c-1"))
        #expect(second.path == String(first.path.dropLast(".jsonl".count)) + "-2.jsonl")
        #expect(try Transcript.load(first.path).records.count == 1)
        writer.finish(second)
    }

    @Test func writingToAFinishedTranscriptOrAnUnwritableDirectoryIsAnError() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try TranscriptWriter(directory: directory)
        let file = try writer.begin(conversation: "c-1", scope: [], start: Self.start("c-1"))
        writer.finish(file)
        writer.finish(file)  // again: nothing
        #expect {
            try writer.append(.end(.init(ending: "completed", turns: 0, at: TranscriptClock.timestamp())), to: file)
        } throws: { ($0 as? TranscriptError)?.code == .notOpen }
        #expect {
            try TranscriptWriter(directory: "/proc/no-transcripts-here")
        } throws: { ($0 as? TranscriptError)?.code == .io }
    }
}
