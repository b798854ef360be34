import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentKit
import Testing

/// The job runner copies the input body through and appends the phase's result instead of serializing the whole
/// Interaction again; these tests hold the output to the document the full serialization gives.
@Suite("Output splicing")
struct OutputSplicingTests {
    /// What the output must be: the input's members plus `key: result`.
    private func expected(_ input: String, _ key: String, _ result: JSONValue) throws -> JSONValue {
        var members = try #require((try JSONValue.parse(input)).objectValue)
        members[key] = result
        return .object(members)
    }

    @Test func handleOutputKeepsTheInputAndRepeatsTheIntentInTheDefaultActivity() async throws {
        let input =
            #"{ "zeta": [1, 2],"intent" : {"parameters": {"text": "a \"quoted\" \u00e9 text"}, "type": "Echo"} }"#
        let output = await Examples.provider.run(
            intentType: "Echo", phase: .handle, body: Array(input.utf8),
            context: HandlerContext(jobID: "job-1", workerName: "w")
        )
        let json = try #require(output.json)
        let handle = try #require(json["handle"])
        let intent = try #require((try JSONValue.parse(input))["intent"])
        let data = try #require(handle["data"]?.objectValue)
        let response = HandleResponse<EchoIntent>(code: .success, data: data)
        #expect(json == (try expected(input, "handle", response.jsonValue(intent: intent))))
        #expect(handle["userActivity"]?["userInfo"]?["interaction"]?["intent"] == intent)
        #expect(data["text"] == #"a "quoted" é text"#)
        // The input's bytes come through unchanged, in their order.
        #expect(String(decoding: output.body, as: UTF8.self).hasPrefix(#"{ "zeta": [1, 2],"intent" : {"parameters""#))
    }

    @Test func handleWithMessageAndNoDataMatchesTheFullSerialization() async throws {
        let input = #"{"intent":{"type":"Echo","parameters":{"failWith":"no"}}}"#
        let job = try await runJob("Echo", .handle, input)
        let intent = try #require((try JSONValue.parse(input))["intent"])
        let response = HandleResponse<EchoIntent>(code: .failure, message: "no")
        #expect(job.json == (try expected(input, "handle", response.jsonValue(intent: intent))))
    }

    @Test func anInputThatAlreadyHasTheResultKeyGetsItReplacedNotDuplicated() async throws {
        let input = #"{"handle":{"code":"old"},"intent":{"type":"Echo","parameters":{"text":"x"}}}"#
        let output = await Examples.provider.run(
            intentType: "Echo", phase: .handle, body: Array(input.utf8), context: HandlerContext()
        )
        let text = String(decoding: output.body, as: UTF8.self)
        #expect(text.components(separatedBy: #""handle""#).count == 2)
        #expect(output.json?["handle"]?["code"] == "success")
    }

    @Test func confirmAndResolveOutputsMatchTheFullSerialization() async throws {
        let input =
            #"{"intent":{"type":"StartWorkout","parameters":{"workoutName":"yoga","workoutLocationType":"indoor"}},"x":true}"#
        let confirm = try await runJob("StartWorkout", .confirm, input)
        #expect(confirm.json == (try expected(input, "confirm", ["code": "ready"])))
        let resolveInput = #"{"intent":{"type":"RequestRide","parameters":{"partySize":9}}}"#
        let resolve = try await runJob("RequestRide", .resolve, resolveInput)
        #expect(resolve.kind("partySize") == "unsupported")
        #expect(resolve.json["intent"] == ["type": "RequestRide", "parameters": ["partySize": 9]])
        #expect(resolve.json.objectValue?.keys.sorted() == ["intent", "resolve"])
    }
}
