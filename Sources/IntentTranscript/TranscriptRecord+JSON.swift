public import ConciergeJSON

extension TranscriptRecord {
    /// The phase words a `reply` record's `phase` may hold (the REPLY's F4, empty for some errors).
    public static let replyPhases: Set<String> = ["", "resolve", "confirm", "handle", "lifecycle"]

    /// The record as a JSON object, `"record"` included.
    public var jsonValue: JSONValue {
        var object = fields
        object["record"] = .string(kind)
        return .object(object)
    }

    /// The record as one line of JSON, without the newline: `"record"` first (a reader of the file sees each line's
    /// kind at once), then the other keys sorted by their UTF-8 bytes.
    public func jsonLine() -> String {
        String(decoding: jsonLineBytes(), as: UTF8.self)
    }

    /// ``jsonLine()`` as UTF-8 bytes.
    public func jsonLineBytes() -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: #"{"record":"#.utf8)
        JSONText.appendString(kind, to: &line)
        let rest = JSONValue.object(fields).serialized()
        // `rest` is `{...}`: its members follow the record's kind after a comma, `{}` adds only the closing brace.
        if rest.count > 2 { line.append(UInt8(ascii: ",")) }
        line.append(contentsOf: rest.dropFirst())
        return line
    }

    /// Decodes one line of a transcript (without its newline).
    /// - Throws: ``TranscriptError`` (`not-json`, `not-object`, `unknown-record`, `missing-field`, `wrong-type`,
    ///   `bad-value`), without a line number: ``Transcript`` adds it.
    public init(jsonLine: some Collection<UInt8>) throws(TranscriptError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(jsonLine))
        } catch {
            throw TranscriptError(code: .notJSON, message: "the line is not JSON (\(error))")
        }
        try self.init(json: value)
    }

    /// Decodes one line of a transcript given as a string.
    public init(jsonLine: String) throws(TranscriptError) {
        try self.init(jsonLine: Array(jsonLine.utf8))
    }

    /// Decodes a record from its JSON object. Keys the format does not define are ignored (a newer writer may add
    /// some); every key it defines must be there with its type and an allowed value.
    public init(json: JSONValue) throws(TranscriptError) {
        guard case .object(let object) = json else {
            throw TranscriptError(code: .notObject, message: "a record is a JSON object, got \(json.kindName)")
        }
        guard let kind = object["record"] else {
            throw TranscriptError(code: .unknownRecord, message: "the record has no \"record\" key")
        }
        guard case .string(let name) = kind else {
            throw TranscriptError(code: .unknownRecord, message: "\"record\" must be a string, got \(kind.kindName)")
        }
        let fields = _RecordFields(kind: name, object: object)
        switch name {
        case "start":
            let version = try fields.int("version")
            guard version == Self.formatVersion else {
                throw fields.bad("version", "is \(version); this reader reads version \(Self.formatVersion)")
            }
            let conversation = try fields.string("conversation")
            guard Self.isConversationID(conversation) else {
                throw fields.bad("conversation", "must be 1 to 255 printable ASCII bytes (0x21-0x7E)")
            }
            let flags = try fields.strings("flags")
            for flag in flags where !Self.flagWords.contains(flag) {
                throw fields.bad("flags", "holds \"\(flag)\"; the flags are \(Self.list(Self.flagWords))")
            }
            let maxAsks = try fields.int("maxAsks")
            guard (1...100).contains(maxAsks) else { throw fields.bad("maxAsks", "must be 1 to 100, got \(maxAsks)") }
            self = .start(
                Start(
                    conversation: conversation, intentType: try fields.nonEmptyString("intentType"),
                    at: try fields.timestamp("at"), flags: flags, maxAsks: maxAsks, version: version))
        case "turn":
            self = .turn(
                Turn(
                    turn: try fields.turn(), requestID: try fields.string("requestId"), sent: try fields.value("sent"),
                    at: try fields.timestamp("at")))
        case "phase":
            let attempt = try fields.int("attempt")
            guard attempt >= 1 else { throw fields.bad("attempt", "must be 1 or more, got \(attempt)") }
            self = .phase(
                Phase(
                    turn: try fields.turn(), phase: try fields.word("phase", in: Self.phases),
                    worker: try fields.string("worker"), attempt: attempt, input: try fields.value("input"),
                    outcome: try fields.word("outcome", in: Self.outcomes), output: try fields.value("output"),
                    ms: try fields.milliseconds()))
        case "reply":
            self = .reply(
                Reply(
                    turn: try fields.turn(), status: try fields.word("status", in: Self.statuses),
                    phase: fields.object["phase"] == nil ? "" : try fields.word("phase", in: Self.replyPhases),
                    body: try fields.value("body"),
                    ms: fields.object["ms"] == nil ? nil : try fields.milliseconds()))
        case "end":
            let turns = try fields.int("turns")
            guard turns >= 0 else { throw fields.bad("turns", "must be 0 or more, got \(turns)") }
            self = .end(
                End(
                    ending: try fields.word("ending", in: Self.endings), turns: turns, at: try fields.timestamp("at"),
                    parameter: try fields.optionalString("parameter"), code: try fields.optionalString("code")))
        default:
            throw TranscriptError(
                code: .unknownRecord,
                message: "\"record\" is \"\(name)\"; the records are start, turn, phase, reply and end")
        }
    }

    /// Whether `text` is a conversation id: 1 to 255 bytes, each printable ASCII (0x21-0x7E).
    public static func isConversationID(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...255).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Every key of the record but `"record"`.
    var fields: JSONObject {
        switch self {
        case .start(let start):
            return [
                "version": .int(Int64(start.version)), "conversation": .string(start.conversation),
                "intentType": .string(start.intentType), "at": .string(start.at),
                "flags": .array(start.flags.map(JSONValue.string)), "maxAsks": .int(Int64(start.maxAsks)),
            ]
        case .turn(let turn):
            return [
                "turn": .int(Int64(turn.turn)), "requestId": .string(turn.requestID), "sent": turn.sent,
                "at": .string(turn.at),
            ]
        case .phase(let phase):
            return [
                "turn": .int(Int64(phase.turn)), "phase": .string(phase.phase), "worker": .string(phase.worker),
                "attempt": .int(Int64(phase.attempt)), "input": phase.input, "outcome": .string(phase.outcome),
                "output": phase.output, "ms": .double(phase.ms),
            ]
        case .reply(let reply):
            var fields: JSONObject = [
                "turn": .int(Int64(reply.turn)), "status": .string(reply.status), "phase": .string(reply.phase),
                "body": reply.body,
            ]
            fields["ms"] = reply.ms.map(JSONValue.double)
            return fields
        case .end(let end):
            var fields: JSONObject = [
                "ending": .string(end.ending), "turns": .int(Int64(end.turns)), "at": .string(end.at),
            ]
            fields["parameter"] = end.parameter.map(JSONValue.string)
            fields["code"] = end.code.map(JSONValue.string)
            return fields
        }
    }

    static func list(_ words: Set<String>) -> String { words.sorted().joined(separator: ", ") }
}

extension JSONValue {
    /// The JSON type's name, for messages: `a string`, `an object`, ...
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// The keys of one record, read with the errors the format promises.
struct _RecordFields {
    let kind: String
    let object: JSONObject

    func missing(_ key: String) -> TranscriptError {
        TranscriptError(code: .missingField, message: "the \(kind) record has no \"\(key)\"")
    }

    func wrong(_ key: String, _ expected: String, _ value: JSONValue) -> TranscriptError {
        TranscriptError(
            code: .wrongType, message: "\"\(key)\" of the \(kind) record must be \(expected), got \(value.kindName)")
    }

    func bad(_ key: String, _ why: String) -> TranscriptError {
        TranscriptError(code: .badValue, message: "\"\(key)\" of the \(kind) record \(why)")
    }

    func value(_ key: String) throws(TranscriptError) -> JSONValue {
        guard let value = object[key] else { throw missing(key) }
        return value
    }

    func string(_ key: String) throws(TranscriptError) -> String {
        let value = try value(key)
        guard case .string(let text) = value else { throw wrong(key, "a string", value) }
        return text
    }

    func nonEmptyString(_ key: String) throws(TranscriptError) -> String {
        let text = try string(key)
        guard !text.isEmpty else { throw bad(key, "must not be empty") }
        return text
    }

    func word(_ key: String, in words: Set<String>) throws(TranscriptError) -> String {
        let text = try string(key)
        guard words.contains(text) else {
            throw bad(key, "is \"\(text)\"; it must be one of \(TranscriptRecord.list(words))")
        }
        return text
    }

    func optionalString(_ key: String) throws(TranscriptError) -> String? {
        object[key] == nil ? nil : try string(key)
    }

    func int(_ key: String) throws(TranscriptError) -> Int {
        let value = try value(key)
        guard case .int(let number) = value, let int = Int(exactly: number) else {
            throw wrong(key, "an integer", value)
        }
        return int
    }

    func turn() throws(TranscriptError) -> Int {
        let turn = try int("turn")
        guard turn >= 1 else { throw bad("turn", "must be 1 or more, got \(turn)") }
        return turn
    }

    func milliseconds() throws(TranscriptError) -> Double {
        let value = try value("ms")
        guard let ms = value.doubleValue else { throw wrong("ms", "a number", value) }
        guard ms >= 0, ms.isFinite else { throw bad("ms", "must be 0 or more, got \(ms)") }
        return ms
    }

    func strings(_ key: String) throws(TranscriptError) -> [String] {
        let value = try value(key)
        guard case .array(let items) = value else { throw wrong(key, "an array of strings", value) }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw wrong(key, "an array of strings", item) }
            strings.append(text)
        }
        return strings
    }

    func timestamp(_ key: String) throws(TranscriptError) -> String {
        let text = try string(key)
        guard TranscriptClock.isTimestamp(text) else {
            throw bad(key, "is \"\(text)\"; it must be UTC ISO 8601 with milliseconds, e.g. 2026-11-28T12:00:00.000Z")
        }
        return text
    }
}
