import ConciergeJSON
import IntentKit
import IntentTranscript

/// A SendMessage conversation recorded by running a provider's handlers as a broker would run its turns: turn 1
/// sends the intent with recipient "John" (resolve stops at a disambiguation), turn 2 answers option 0 (resolve,
/// confirm and handle run on the intent with that option written in), and the conversation ends `completed`.
///
/// The checked-in fixture `Fixtures/send-message.jsonl` was made by it (with Examples.provider); set
/// `CONCIERGE_WRITE_TRANSCRIPT_FIXTURES=1` when running `TranscriptFixtureTests` to write it again.
enum SendMessageConversation {
    static let conversation = "c-send-1"
    static let turn1: JSONValue = [
        "intent": [
            "type": "SendMessage",
            "parameters": ["recipient": ["displayName": "John"], "content": "Running 5 minutes late"],
        ]
    ]
    static let turn2: JSONValue = ["parameter": "recipient", "option": 0]

    /// A time of the recording: 2026-11-28T12:00:00 plus `offset` milliseconds.
    static func at(_ offset: Int) -> String {
        TranscriptClock.timestamp(secondsSinceEpoch: 1_795_867_200 + offset / 1000, milliseconds: offset % 1000)
    }

    static func run(_ provider: HandlerProvider, _ phase: IntentPhase, _ input: JSONValue) async -> (
        outcome: String, output: JSONValue
    ) {
        let output = await provider.run(
            intentType: "SendMessage", phase: phase, body: input.serialized(),
            context: HandlerContext(jobID: "j", workerName: "w1"))
        return (output.outcome.rawValue, output.json ?? .null)
    }

    /// `body` with the broker's `"conversation"` key added.
    static func reply(_ body: JSONValue, conversation: JSONObject) -> JSONValue {
        guard case .object(var object) = body else { return body }
        object["conversation"] = .object(conversation)
        return .object(object)
    }

    /// The records of the conversation, run on `provider`.
    static func records(on provider: HandlerProvider) async -> [TranscriptRecord] {
        var records: [TranscriptRecord] = [
            .start(
                .init(
                    conversation: conversation, intentType: "SendMessage", at: at(0), flags: ["record"], maxAsks: 3)),
            .turn(.init(turn: 1, requestID: "r1", sent: turn1, at: at(1))),
        ]
        // Turn 1: a lifecycle that stops at resolve.
        let resolve1 = await run(provider, .resolve, turn1)
        records.append(
            .phase(
                .init(
                    turn: 1, phase: "resolve", worker: "w1", attempt: 1, input: turn1, outcome: resolve1.outcome,
                    output: resolve1.output, ms: 0.412)))
        let options = resolve1.output["resolve"]?["recipient"]?["options"] ?? []
        records.append(
            .reply(
                .init(
                    turn: 1, status: "final", phase: "resolve",
                    body: reply(
                        resolve1.output,
                        conversation: [
                            "id": .string(conversation), "intentType": "SendMessage", "turn": 1, "state": "asking",
                            "asking": [
                                ["parameter": "recipient", "kind": "disambiguation", "options": options, "asks": 1]
                            ],
                            "asks": ["recipient": 1], "maxAsks": 3, "expiresInMs": 299_998, "recording": true,
                        ]), ms: 1.25)))
        // Turn 2: option 0 written into the intent of the last output; the lifecycle runs from resolve.
        var intent = resolve1.output["intent"]?.objectValue ?? [:]
        var parameters = intent["parameters"]?.objectValue ?? [:]
        parameters["recipient"] = options[0]
        intent["parameters"] = .object(parameters)
        records.append(.turn(.init(turn: 2, requestID: "r2", sent: turn2, at: at(5000))))
        var input: JSONValue = ["intent": .object(intent)]
        var last: (phase: String, outcome: String, output: JSONValue) = ("resolve", "error", .null)
        for (index, phase) in [IntentPhase.resolve, .confirm, .handle].enumerated() {
            let result = await run(provider, phase, input)
            records.append(
                .phase(
                    .init(
                        turn: 2, phase: phase.rawValue, worker: "w1", attempt: 1, input: input,
                        outcome: result.outcome, output: result.output, ms: 0.3 + Double(index) / 10)))
            last = (phase.rawValue, result.outcome, result.output)
            guard result.outcome == "continue" else { break }
            input = result.output
        }
        records.append(
            .reply(
                .init(
                    turn: 2, status: last.outcome == "error" ? "error" : "final", phase: last.phase,
                    body: reply(
                        last.output,
                        conversation: [
                            "id": .string(conversation), "intentType": "SendMessage", "turn": 2, "state": "ended",
                            "asking": [], "asks": ["recipient": 1], "maxAsks": 3, "ending": "completed",
                            "recording": true,
                        ]), ms: 2.5)))
        records.append(.end(.init(ending: "completed", turns: 2, at: at(5003))))
        return records
    }

    /// The conversation as a transcript.
    static func transcript(on provider: HandlerProvider) async throws -> Transcript {
        try Transcript(records: await records(on: provider))
    }
}
