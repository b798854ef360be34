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

    /// Every kind of record and the values at the edges of the format (an error RESULT, a body that was not JSON,
    /// an error REPLY with an empty phase, both flags, an ending other than completed), as the writer writes them.
    static let writerSample: [TranscriptRecord] = [
        .start(
            .init(
                conversation: "c/2~", intentType: "OrderPizza", at: "2026-11-28T12:00:00.000Z",
                flags: ["record", "confirm"], maxAsks: 1)),
        .turn(
            .init(
                turn: 1, requestID: "r-1", sent: ["intent": ["type": "OrderPizza", "parameters": ["size": "huge"]]],
                at: "2026-11-28T12:00:00.002Z")),
        .phase(
            .init(
                turn: 1, phase: "resolve", worker: "worker-4711", attempt: 1,
                input: ["intent": ["type": "OrderPizza", "parameters": ["size": "huge"]]], outcome: "error",
                output: ["code": "invalid-enum", "message": "size: huge", "intent": "OrderPizza", "parameter": "size"],
                ms: 0.75)),
        .reply(
            .init(
                turn: 1, status: "error", phase: "",
                body: ["code": "invalid-enum", "message": "size: huge", "intent": "OrderPizza", "parameter": "size"],
                ms: 1)),
        .turn(.init(turn: 2, requestID: "r-2", sent: ["confirm": true], at: "2026-11-28T12:00:01.000Z")),
        .phase(
            .init(
                turn: 2, phase: "handle", worker: "worker-4712", attempt: 2, input: ["intent": ["type": "OrderPizza"]],
                outcome: "stop", output: "not JSON {", ms: 12.5)),
        .reply(.init(turn: 2, status: "final", phase: "handle", body: "not JSON {", ms: 13)),
        .end(.init(ending: "too-many-asks", turns: 2, at: "2026-11-28T12:00:01.013Z")),
    ]

    @Test func theWriterWritesTheSampleFixtureByteForByte() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("writer-sample-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try TranscriptWriter(directory: directory)
        let file = try writer.begin(conversation: "c/2~", scope: [1], start: Self.writerSample[0])
        for record in Self.writerSample.dropFirst() { try writer.append(record, to: file) }
        writer.finish(file)
        #expect(file.path.hasPrefix(directory + "/c%2F2%7E-"))
        let written = try String(contentsOfFile: file.path, encoding: .utf8)
        if ProcessInfo.processInfo.environment["CONCIERGE_WRITE_TRANSCRIPT_FIXTURES"] == "1" {
            try written.write(toFile: Fixture.writerSample, atomically: true, encoding: .utf8)
        }
        // Tests/python/test_transcript_schema.py validates the checked-in file: so every line the writer writes does.
        #expect(written == (try String(contentsOfFile: Fixture.writerSample, encoding: .utf8)))
        #expect(try Transcript.load(file.path).records == Self.writerSample)
    }
}
