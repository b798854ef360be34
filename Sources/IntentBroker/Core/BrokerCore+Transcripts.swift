import ConciergeJSON
import IntentTranscript
import IntentWire

/// Transcripts of recorded conversations (`Docs/TRANSCRIPTS.md`, `Schemas/json/transcript.schema.json`): the core
/// makes each line as a ``TranscriptRecord``, and the shell writes it to the conversation's JSON Lines file with the
/// wall-clock time (`at`) filled in.
extension BrokerCore {
    /// The first line of a recorded conversation.
    mutating func recordStart(_ conversation: Conversation) {
        guard conversation.recording else { return }
        transcript(
            .begin, conversation,
            .start(
                .init(
                    conversation: conversation.key.name, intentType: conversation.intentTypeName, at: "",
                    flags: Self.flagWords(conversation.flags), maxAsks: conversation.maxAsks)))
    }

    /// The turn as the client sent it.
    mutating func recordTurn(_ turn: ClientTurn, _ conversation: Conversation, sent: JSONValue, now: UInt64) {
        guard conversation.recording else { return }
        transcript(
            .append, conversation,
            .turn(
                .init(
                    turn: turn.turn, requestID: String(decoding: turn.requestID, as: UTF8.self), sent: sent, at: "")))
    }

    /// The final or error REPLY of a turn (progress replies are not recorded); `elapsed` since the turn's request
    /// arrived, when known.
    mutating func recordReply(
        _ conversation: Conversation, isError: Bool, phase: RequestPhase?, body: [UInt8], elapsed: UInt64? = nil
    ) {
        guard conversation.recording else { return }
        transcript(
            .append, conversation,
            .reply(
                .init(
                    turn: conversation.turn, status: isError ? "error" : "final",
                    phase: phase?.name.description ?? "",
                    body: (try? JSONValue.parse(body)) ?? .string(String(decoding: body, as: UTF8.self)),
                    ms: elapsed.map { Double($0) / 1e6 })))
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
            .phase(
                .init(
                    turn: conversation.turn, phase: request.phase.name.description,
                    worker: workers[worker]?.name ?? "", attempt: request.attempt,
                    input: (try? JSONValue.parse(input)) ?? .null, outcome: result.outcome.rawValue,
                    output: (try? JSONValue.parse(outputBytes)) ?? .null,
                    ms: Double(now &- request.bookedAt) / 1e6)))
    }

    /// The last line of an ended conversation's transcript.
    mutating func finishTranscript(_ conversation: Conversation, now: UInt64) {
        guard conversation.recording else { return }
        transcript(
            .finish, conversation,
            .end(
                .init(
                    ending: conversation.ending?.rawValue ?? Conversation.Ending.cancelled.rawValue,
                    turns: conversation.turn, at: "", parameter: conversation.endingParameter,
                    code: conversation.endingCode)))
    }

    /// The conversation never started (its first turn failed before handle): its transcript goes.
    mutating func discardTranscript(_ conversation: Conversation) {
        guard conversation.recording else { return }
        transcript(.discard, conversation, nil)
    }

    private mutating func transcript(
        _ step: TranscriptLine.Step, _ conversation: Conversation, _ record: TranscriptRecord?
    ) {
        actions.append(.transcript(TranscriptLine(conversation: conversation.key, step: step, record: record)))
    }
}

/// A line of a conversation's transcript, for the shell to write (``BrokerAction/transcript(_:)``).
struct TranscriptLine {
    enum Step {
        /// Open the conversation's file and write the `start` record.
        case begin
        /// Append the record.
        case append
        /// Append the `end` record and close the file.
        case finish
        /// The conversation never started (its first turn failed before handle): close and delete the file.
        case discard
    }

    let conversation: ConversationKey
    let step: Step
    /// The record, with `at` empty (the shell fills in the wall-clock time); nil for ``Step/discard``.
    let record: TranscriptRecord?
}
