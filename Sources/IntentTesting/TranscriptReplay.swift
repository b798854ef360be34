public import IntentKit
public import IntentTranscript

/// A recorded conversation (`Docs/TRANSCRIPTS.md`) as a test of your handlers: each recorded phase runs again, in
/// process, on the input it ran on, and its outcome and output are compared with the recorded ones.
///
/// ```swift
/// @Test func theRecordedSendMessageConversationStillHolds() async throws {
///     let replay = try TranscriptReplay(contentsOf: fixture("send-message.jsonl"), ignoring: ["handle.data.messageId"])
///     let report = await replay.run(on: Examples.provider)
///     #expect(report.mismatches.isEmpty, "\(report)")
/// }
/// ```
///
/// A mismatch names its turn, phase and key path with the recorded and the replayed value (see
/// ``TranscriptComparison``). Handle phases run again too: give the test a provider whose handlers have no effects
/// outside the test.
public struct TranscriptReplay: Sendable {
    /// The transcript replayed.
    public let transcript: Transcript
    /// Key paths left out of the comparison, beyond ``TranscriptComparison/alwaysIgnored`` (e.g.
    /// `handle.data.messageId`, an id a handler makes anew each time).
    public var ignoredPaths: [String]
    /// The job context the phases run with (the handle phase's idempotency key and attempt, the deadline, the
    /// cancellation).
    public var context: TestHandlerContext

    /// A replay of `transcript`.
    public init(_ transcript: Transcript, ignoring paths: [String] = [], context: TestHandlerContext = .init()) {
        self.transcript = transcript
        self.ignoredPaths = paths
        self.context = context
    }

    /// A replay of the transcript file at `path`.
    /// - Throws: ``TranscriptError`` when the file cannot be read or is not a transcript (with its line number).
    public init(contentsOf path: String, ignoring paths: [String] = [], context: TestHandlerContext = .init())
        throws(TranscriptError)
    {
        self.init(try Transcript.load(path), ignoring: paths, context: context)
    }

    /// Runs every recorded phase on `provider` and compares: the report's ``TranscriptReplayReport/mismatches`` is
    /// empty when every phase answered as recorded; its `description` is the diff.
    public func run(on provider: HandlerProvider) async -> TranscriptReplayReport {
        await transcript.replayPhases(ignoring: ignoredPaths) { intentType, phase in
            await Self.run(phase, intentType: intentType, on: provider, context: context)
        }
    }

    /// Runs one recorded phase on its recorded input.
    static func run(
        _ phase: TranscriptRecord.Phase, intentType: String, on provider: HandlerProvider, context: TestHandlerContext
    ) async -> TranscriptPhaseAnswer {
        guard let jobPhase = IntentPhase(phase.phase), jobPhase != .lifecycle else {
            // The reader admits only resolve, confirm and handle; a record made in code may hold anything.
            return TranscriptPhaseAnswer(
                outcome: "error", output: ["code": "bad-phase", "message": .string("no phase \"\(phase.phase)\"")])
        }
        let output = await context.runJob(
            intentType: intentType, phase: jobPhase, body: phase.input.serialized(), on: provider)
        return TranscriptPhaseAnswer(
            outcome: output.outcome.rawValue,
            output: output.json ?? .string(String(decoding: output.body, as: UTF8.self)))
    }
}
