import ConciergeJSON
import IntentTranscript
import Testing

/// Each record kind's line: what the writer writes reads back the same, `"record"` comes first, and each way a line
/// can be wrong has its code.
@Suite struct TranscriptRecordTests {
    static let at = "2026-11-28T12:00:00.000Z"
    static let records: [TranscriptRecord] = [
        .start(.init(conversation: "c-1", intentType: "OrderPizza", at: at, flags: ["record", "confirm"], maxAsks: 3)),
        .turn(.init(turn: 1, requestID: "r1", sent: ["intent": ["type": "OrderPizza"]], at: at)),
        .phase(
            .init(
                turn: 1, phase: "resolve", worker: "w1", attempt: 2, input: ["intent": ["type": "OrderPizza"]],
                outcome: "stop", output: ["resolve": ["size": ["kind": "needsValue"]]], ms: 1.234)),
        .reply(.init(turn: 1, status: "error", phase: "", body: ["code": "busy", "message": "full"], ms: 2.5)),
        .reply(.init(turn: 2, status: "final", phase: "handle", body: ["handle": ["code": "success"]], ms: nil)),
        .end(.init(ending: "too-many-asks", turns: 4, at: at, parameter: "size")),
        .end(.init(ending: "failed", turns: 2, at: at, code: "worker-lost")),
    ]

    @Test(arguments: records)
    func aRecordReadsBackAsWrittenWithItsKindFirst(record: TranscriptRecord) throws {
        let line = record.jsonLine()
        #expect(line.hasPrefix(#"{"record":"\#(record.kind)""#))
        #expect(!line.contains("\n"))
        #expect(try TranscriptRecord(jsonLine: line) == record)
        #expect(try TranscriptRecord(json: record.jsonValue) == record)
    }

    @Test func anEndRecordIsTheBriefsLine() {
        let line = TranscriptRecord.end(.init(ending: "completed", turns: 3, at: Self.at)).jsonLine()
        #expect(line == #"{"record":"end","at":"2026-11-28T12:00:00.000Z","ending":"completed","turns":3}"#)
    }

    @Test func keysTheFormatDoesNotDefineAreIgnored() throws {
        let line = #"{"record":"end","ending":"completed","turns":1,"at":"2026-11-28T12:00:00.000Z","later":1}"#
        #expect(try TranscriptRecord(jsonLine: line) == .end(.init(ending: "completed", turns: 1, at: Self.at)))
    }

    @Test func aReplyWithoutPhaseOrMsAndAPhaseWithItsOwnTimeRead() throws {
        let reply = try TranscriptRecord(jsonLine: #"{"record":"reply","turn":1,"status":"error","body":{}}"#)
        #expect(reply == .reply(.init(turn: 1, status: "error", phase: "", body: [:], ms: nil)))
        let phase = try TranscriptRecord(
            jsonLine:
                #"{"record":"phase","turn":1,"phase":"handle","worker":"w","attempt":1,"input":{},"outcome":"stop","output":null,"ms":1,"at":"2026-11-28T12:00:00.000Z"}"#
        )
        #expect(phase.turnNumber == 1)
    }

    static let badLines: [(String, TranscriptError.Code, String)] = [
        (#"{"record":"end""#, .notJSON, "not JSON"),
        ("[1]", .notObject, "a JSON object, got an array"),
        (#"{"turn":1}"#, .unknownRecord, "no \"record\""),
        (#"{"record":"hello"}"#, .unknownRecord, "\"hello\""),
        (#"{"record":"end","ending":"completed","at":"2026-11-28T12:00:00.000Z"}"#, .missingField, "\"turns\""),
        (#"{"record":"end","ending":"completed","turns":"3","at":"2026-11-28T12:00:00.000Z"}"#, .wrongType, "integer"),
        (#"{"record":"end","ending":"done","turns":3,"at":"2026-11-28T12:00:00.000Z"}"#, .badValue, "\"done\""),
        (#"{"record":"end","ending":"completed","turns":3,"at":"2026-11-28 12:00:00"}"#, .badValue, "ISO 8601"),
        (
            #"{"record":"phase","turn":0,"phase":"resolve","worker":"w","attempt":1,"input":{},"outcome":"stop","output":{},"ms":1}"#,
            .badValue, "1 or more"
        ),
        (
            #"{"record":"phase","turn":1,"phase":"resolve","worker":"w","attempt":1,"input":{},"outcome":"maybe","output":{},"ms":1}"#,
            .badValue, "\"maybe\""
        ),
        (
            #"{"record":"start","version":2,"conversation":"c","intentType":"T","at":"2026-11-28T12:00:00.000Z","flags":[],"maxAsks":3}"#,
            .badValue, "version 1"
        ),
        (
            #"{"record":"start","version":1,"conversation":"c 1","intentType":"T","at":"2026-11-28T12:00:00.000Z","flags":[],"maxAsks":3}"#,
            .badValue, "printable ASCII"
        ),
        (
            #"{"record":"start","version":1,"conversation":"c","intentType":"T","at":"2026-11-28T12:00:00.000Z","flags":["loud"],"maxAsks":3}"#,
            .badValue, "\"loud\""
        ),
    ]

    @Test(arguments: badLines)
    func aBadLineHasItsCodeAndSaysWhy(line: String, code: TranscriptError.Code, says: String) {
        #expect {
            try TranscriptRecord(jsonLine: line)
        } throws: { error in
            guard let error = error as? TranscriptError else { return false }
            return error.code == code && error.message.contains(says) && error.line == nil
        }
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(
            TranscriptClock.timestamp(secondsSinceEpoch: 1_795_867_200, milliseconds: 7) == "2026-11-28T12:00:00.007Z")
        #expect(TranscriptClock.isTimestamp(TranscriptClock.timestamp()))
        #expect(!TranscriptClock.isTimestamp("2026-13-28T12:00:00.000Z"))
        #expect(!TranscriptClock.isTimestamp("2026-11-28T12:00:00Z"))
    }
}
