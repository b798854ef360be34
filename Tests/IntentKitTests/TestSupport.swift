import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentKit
import Testing

/// The repository root, found from this file's path (Tests/IntentKitTests/TestSupport.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The result of one job run through `HandlerProvider.run` with a JSON body.
struct Job {
    let outcome: JobOutcome
    let json: JSONValue

    /// The resolution of one parameter.
    func resolution(_ name: String) -> JSONValue? { json["resolve"]?[name] }
    /// The resolution kind of one parameter.
    func kind(_ name: String) -> String? { resolution(name)?["kind"]?.stringValue }
    /// A parameter of the intent in the output.
    func parameter(_ name: String) -> JSONValue? { json["intent"]?["parameters"]?[name] }
}

/// Runs one job of the example provider (or `provider`) with a JSON body given as text.
func runJob(
    _ intentType: String,
    _ phase: IntentPhase,
    _ body: String,
    provider: HandlerProvider = Examples.provider,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Job {
    let output = await provider.run(
        intentType: intentType,
        phase: phase,
        body: Array(body.utf8),
        context: HandlerContext(jobID: "job-1", workerName: "test-worker")
    )
    let json = try #require(output.json, "the output body is not JSON", sourceLocation: sourceLocation)
    return Job(outcome: output.outcome, json: json)
}

/// A body `{"intent": {"type": type, "parameters": parameters}}` with the parameters given as JSON text.
func body(_ intentType: String, _ parameters: String) -> String {
    #"{"intent":{"type":"\#(intentType)","parameters":\#(parameters)}}"#
}

/// Parses JSON text in a test (fails the test on invalid JSON).
func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    do { return try JSONValue.parse(Array(text.utf8)) } catch {
        Issue.record("invalid JSON in test: \(text)", sourceLocation: sourceLocation)
        throw error
    }
}
