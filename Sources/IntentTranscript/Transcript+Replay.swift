public import ConciergeJSON

/// What a replay target answered for one phase: the RESULT's outcome word and body.
public struct TranscriptPhaseAnswer: Sendable, Hashable {
    /// `continue`, `stop`, `error` or `cancelled`.
    public var outcome: String
    /// The RESULT's body.
    public var output: JSONValue

    /// Creates an answer.
    public init(outcome: String, output: JSONValue) {
        self.outcome = outcome
        self.output = output
    }
}

/// What a broker answered for one turn: the final or error REPLY.
public struct TranscriptReplyAnswer: Sendable, Hashable {
    /// `final` or `error`.
    public var status: String
    /// The REPLY's phase frame.
    public var phase: String
    /// The REPLY's body.
    public var body: JSONValue

    /// Creates an answer.
    public init(status: String, phase: String, body: JSONValue) {
        self.status = status
        self.phase = phase
        self.body = body
    }
}

extension Transcript {
    /// The name replay reports use: the file, else the conversation id.
    public var name: String { path ?? start.conversation }

    /// Replays every `phase` record: `run` runs that phase of the start's intent type on the recorded `input` (as a
    /// JOB of one phase would), and its answer is compared with the recorded `outcome` and `output`.
    ///
    /// Each phase runs on its recorded input, not on the previous replayed output, so that one changed answer shows
    /// as the mismatches of its own phase and does not cascade through the rest of the conversation.
    /// - Parameters:
    ///   - paths: Key paths to ignore, beyond ``TranscriptComparison/alwaysIgnored``.
    ///   - run: Runs one phase: `(intentType, phase record)` to the target's answer. A throw stops the replay and is
    ///     rethrown (the target could not answer at all).
    public func replayPhases(
        ignoring paths: [String] = [],
        _ run: (String, TranscriptRecord.Phase) async throws -> TranscriptPhaseAnswer
    ) async rethrows -> TranscriptReplayReport {
        var comparison = TranscriptComparison(ignoring: paths)
        for phase in phases {
            let answer = try await run(start.intentType, phase)
            comparison.compare(phase, outcome: answer.outcome, output: answer.output)
        }
        return TranscriptReplayReport(name: name, comparison: comparison, unit: "phases")
    }

    /// Replays every `turn` record: `send` sends the recorded `sent` body as that turn of a new conversation and
    /// returns the final or error REPLY (nil if none came), which is compared with the turn's recorded `reply`.
    /// - Parameters:
    ///   - paths: Key paths to ignore, beyond ``TranscriptComparison/alwaysIgnored``.
    ///   - send: Sends one turn and waits for its final answer.
    public func replayTurns(
        ignoring paths: [String] = [],
        _ send: (TranscriptRecord.Turn) async throws -> TranscriptReplyAnswer?
    ) async rethrows -> TranscriptReplayReport {
        var comparison = TranscriptComparison(ignoring: paths)
        let replies = Dictionary(replies.map { ($0.turn, $0) }, uniquingKeysWith: { _, last in last })
        for turn in turns {
            let answer = try await send(turn)
            guard let recorded = replies[turn.turn] else { continue }  // cut before its reply: nothing to compare
            guard let answer else {
                comparison.missing(turn: turn.turn, phase: "reply", part: "body", recorded: recorded.body)
                continue
            }
            comparison.compare(recorded, status: answer.status, phase: answer.phase, body: answer.body)
        }
        return TranscriptReplayReport(name: name, comparison: comparison, unit: "turns")
    }
}
