import ConciergeJSON
import IntentWire

/// Transcripts of recorded conversations (`Docs/TRANSCRIPTS.md`, `Schemas/json/transcript.schema.json`): the core
/// writes each line as a JSON object, and the shell appends it to the conversation's JSON Lines file with the
/// wall-clock time (`at`) added.
extension BrokerCore {
    /// The turn as the client sent it.
    mutating func recordTurn(_ turn: ClientTurn, _ conversation: Conversation, sent: JSONValue, now: UInt64) {
        guard conversation.recording else { return }
        transcript(
            .append, conversation,
            [
                "record": "turn", "turn": .int(Int64(turn.turn)),
                "requestId": .string(String(decoding: turn.requestID, as: UTF8.self)), "sent": sent,
            ])
    }

    /// The final or error REPLY of a turn (progress replies are not recorded).
    mutating func recordReply(
        _ conversation: Conversation, isError: Bool, phase: RequestPhase?, body: [UInt8], now: UInt64
    ) {
        guard conversation.recording else { return }
        var line: JSONObject = [
            "record": "reply", "turn": .int(Int64(conversation.turn)), "status": .string(isError ? "error" : "final"),
            "body": (try? JSONValue.parse(body)) ?? .string(String(decoding: body, as: UTF8.self)),
        ]
        if let phase { line["phase"] = .string(phase.name.description) }
        if let running = conversation.running, let request = requests[running.request] {
            line["ms"] = .double(Double(now &- request.arrival) / 1e6)
        }
        transcript(.append, conversation, line)
    }

    /// A phase of a conversation turn's job answered: the body it ran on and what it gave.
    mutating func recordPhase(
        _ request: BrokerRequest<Body>, _ result: WorkerResult, output: Body, worker: WorkerID, now: UInt64
    ) {
        guard let key = request.conversation, let conversation = conversations[key], conversation.recording else {
            return
        }
        let input = Self.bytes(of: .body(request.body))
        let outputBytes = Self.bytes(of: .body(output))
        transcript(
            .append, conversation,
            [
                "record": "phase", "turn": .int(Int64(conversation.turn)),
                "phase": .string(request.phase.name.description),
                "worker": .string(workers[worker]?.name ?? ""), "attempt": .int(Int64(request.attempt)),
                "input": (try? JSONValue.parse(input)) ?? .null,
                "outcome": .string(result.outcome.rawValue),
                "output": (try? JSONValue.parse(outputBytes)) ?? .null,
                "ms": .double(Double(now &- request.bookedAt) / 1e6),
            ])
    }

    /// The last line of an ended conversation's transcript.
    mutating func finishTranscript(_ conversation: Conversation, now: UInt64) {
        var line: JSONObject = [
            "record": "end", "ending": .string(conversation.ending?.rawValue ?? "ended"),
            "turns": .int(Int64(conversation.turn)),
        ]
        if let parameter = conversation.endingParameter { line["parameter"] = .string(parameter) }
        if let code = conversation.endingCode { line["code"] = .string(code) }
        transcript(.finish, conversation, line)
    }

    /// Queues one transcript line for the shell.
    mutating func transcript(_ step: TranscriptLine.Step, _ conversation: Conversation, _ line: JSONObject) {
        actions.append(.transcript(TranscriptLine(conversation: conversation.key, step: step, line: line)))
    }
}

/// A line of a conversation's transcript, for the shell to write (``BrokerAction/transcript(_:)``).
struct TranscriptLine {
    enum Step {
        /// Open the conversation's file and write the `start` line.
        case begin
        /// Append the line.
        case append
        /// Append the `end` line and close the file.
        case finish
        /// The conversation never started (its first turn failed before handle): close and delete the file.
        case discard
    }

    let conversation: ConversationKey
    let step: Step
    /// The record, without `at` (the shell adds the wall-clock time).
    let line: JSONObject
}
