public import ConciergeJSON

/// What a set of transcripts exercised: per intent type, the conversations, the parameters seen with the resolution
/// kinds each got, the confirm and handle codes, the error codes of failed phases, and how the conversations ended
/// (`open` for a transcript without its end record).
///
/// ```
/// 3 transcripts, 1 intent type; endings: completed 2, open 1
///
/// SendMessage: 3 conversations, 7 phases; endings: completed 2, open 1
///   parameters:
///     attachments: notRequired 4
///     content: success 4
///     recipient: disambiguation 1, success 3
///   confirm codes: ready 2
///   handle codes: success 2
/// ```
public struct TranscriptCoverage: Sendable, Hashable, CustomStringConvertible {
    /// What the transcripts of one intent type exercised. Every count is a number of phase results (conversations
    /// for ``conversations`` and ``endings``).
    public struct Intent: Sendable, Hashable {
        /// How many transcripts are of this intent type.
        public var conversations = 0
        /// How many phase records they hold.
        public var phases = 0
        /// Each parameter seen (sent, answered or resolved), with the resolution kinds resolve gave it (`success`,
        /// `disambiguation`, ...) and how often; an empty map for a parameter never resolved.
        public var parameters: [String: [String: Int]] = [:]
        /// The confirm codes answered (`ready`, `failure`, ...).
        public var confirmCodes: [String: Int] = [:]
        /// The handle codes answered.
        public var handleCodes: [String: Int] = [:]
        /// The error codes of phases whose outcome was `error` or `cancelled`.
        public var errorCodes: [String: Int] = [:]
        /// The endings of the conversations (`open` for no end record).
        public var endings: [String: Int] = [:]

        /// An empty coverage.
        public init() {}
    }

    /// How many transcripts were counted.
    public private(set) var transcripts = 0
    /// Coverage per intent type.
    public private(set) var intents: [String: Intent] = [:]

    /// The coverage of `transcripts`.
    public init(_ transcripts: [Transcript] = []) {
        for transcript in transcripts { add(transcript) }
    }

    /// The endings of all conversations (`open` for no end record).
    public var endings: [String: Int] {
        intents.values.reduce(into: [:]) { total, intent in total.merge(intent.endings, uniquingKeysWith: +) }
    }

    /// Counts one more transcript.
    public mutating func add(_ transcript: Transcript) {
        transcripts += 1
        var intent = intents[transcript.start.intentType] ?? Intent()
        intent.conversations += 1
        intent.endings[transcript.end?.ending ?? "open", default: 0] += 1
        func see(_ parameter: String) {
            if intent.parameters[parameter] == nil { intent.parameters[parameter] = [:] }
        }
        for turn in transcript.turns {
            for name in Self.parameterNames(sent: turn.sent) { see(name) }
        }
        for phase in transcript.phases {
            intent.phases += 1
            if let parameters = phase.input["intent"]?["parameters"]?.objectValue {
                for (name, _) in parameters { see(name) }
            }
            if phase.outcome == "error" || phase.outcome == "cancelled" {
                intent.errorCodes[phase.output["code"]?.stringValue ?? "(no code)", default: 0] += 1
                continue
            }
            switch phase.phase {
            case "resolve":
                for (name, resolution) in phase.output["resolve"]?.objectValue ?? [:] {
                    let kind = resolution["kind"]?.stringValue ?? "(no kind)"
                    intent.parameters[name, default: [:]][kind, default: 0] += 1
                }
            case "confirm":
                intent.confirmCodes[phase.output["confirm"]?["code"]?.stringValue ?? "(no code)", default: 0] += 1
            case "handle":
                intent.handleCodes[phase.output["handle"]?["code"]?.stringValue ?? "(no code)", default: 0] += 1
            default:
                break
            }
        }
        intents[transcript.start.intentType] = intent
    }

    /// The parameters a TURN body names: an Interaction's intent parameters, or an Answer's `parameter` keys.
    static func parameterNames(sent: JSONValue) -> [String] {
        if let parameters = sent["intent"]?["parameters"]?.objectValue { return parameters.keys }
        let answers = sent["answers"]?.arrayValue ?? [sent]
        return answers.compactMap { $0["parameter"]?.stringValue }
    }

    /// The coverage as JSON (`concierge replay --coverage --json`): `{"transcripts": n, "endings": {...},
    /// "intents": {"T": {"conversations", "phases", "parameters": {"p": {"kind": n}}, "confirmCodes", "handleCodes",
    /// "errorCodes", "endings"}}}`.
    public var jsonValue: JSONValue {
        func counts(_ map: [String: Int]) -> JSONValue { .object(JSONObject(map.mapValues { .int(Int64($0)) })) }
        var types = JSONObject()
        for (type, intent) in intents.sorted(by: { $0.key < $1.key }) {
            types[type] = [
                "conversations": .int(Int64(intent.conversations)), "phases": .int(Int64(intent.phases)),
                "parameters": .object(JSONObject(intent.parameters.mapValues(counts))),
                "confirmCodes": counts(intent.confirmCodes), "handleCodes": counts(intent.handleCodes),
                "errorCodes": counts(intent.errorCodes), "endings": counts(intent.endings),
            ]
        }
        return ["transcripts": .int(Int64(transcripts)), "endings": counts(endings), "intents": .object(types)]
    }

    /// The report as text (see the type's discussion).
    public var description: String {
        func counts(_ map: [String: Int]) -> String {
            map.isEmpty
                ? "none" : map.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        var lines = [
            "\(plural(transcripts, "transcript")), \(plural(intents.count, "intent type")); endings: \(counts(endings))"
        ]
        for (type, intent) in intents.sorted(by: { $0.key < $1.key }) {
            lines.append("")
            lines.append(
                "\(type): \(plural(intent.conversations, "conversation")), \(plural(intent.phases, "phase")); "
                    + "endings: \(counts(intent.endings))")
            lines.append("  parameters:" + (intent.parameters.isEmpty ? " none" : ""))
            for (name, kinds) in intent.parameters.sorted(by: { $0.key < $1.key }) {
                lines.append("    \(name): \(kinds.isEmpty ? "never resolved" : counts(kinds))")
            }
            lines.append("  confirm codes: \(counts(intent.confirmCodes))")
            lines.append("  handle codes: \(counts(intent.handleCodes))")
            if !intent.errorCodes.isEmpty { lines.append("  error codes: \(counts(intent.errorCodes))") }
        }
        return lines.joined(separator: "\n")
    }
}
