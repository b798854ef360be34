import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// Idempotency keys end to end (PROTOCOL.md 4.10): the client library and `concierge send` against a real
    /// broker and workers.
    @Suite(.serialized) struct IdempotencyTests {
        func payment(_ text: String, delayMs: Int = 0) -> JSONValue {
            ["type": "Echo", "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs))]]
        }

        @Test func aRetryWithTheSameKeyIsAReplayAndAnotherIntentIsAConflict() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let key = UUID().uuidString
            let first = try await client.request(intent: payment("pay 5"), phase: .handle, idempotencyKey: key)
            #expect(first.status == .final && !first.isReplay)
            let again = try await client.request(intent: payment("pay 5"), phase: .handle, idempotencyKey: key)
            #expect(again.isReplay)
            #expect(again.body == first.body)
            let other = try await client.request(intent: payment("pay 50"), phase: .handle, idempotencyKey: key)
            #expect(other.errorCode == "idempotency-conflict")
            // Without a key the same intent runs again (another handler instance answers).
            let plain = try await client.request(intent: payment("pay 5"), phase: .handle)
            #expect(!plain.isReplay && plain.body != first.body)
        }

        @Test func sendWithAnIdempotencyKeyPrintsTheReplayTheSecondTime() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            try await cluster.waitUntilServing(try cluster.client())
            let arguments = [
                "send", "--broker", cluster.frontend, "--phase", "handle", "--idempotency-key", UUID().uuidString,
                #"{"type":"Echo","parameters":{"text":"once"}}"#,
            ]
            let first = try runConcierge(arguments)
            let second = try runConcierge(arguments)
            #expect(first.status == 0 && second.status == 0, "\(first.error) \(second.error)")
            let original = try JSONValue.parse(first.output.trimmingCharacters(in: .whitespacesAndNewlines))
            let replay = try JSONValue.parse(second.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(original["replay"] == nil)
            #expect(replay["replay"] == true)
            #expect(replay["body"] == original["body"])
            let bad = try runConcierge(["send", "--broker", cluster.frontend, "--idempotency-key", "", "{}"])
            #expect(bad.status == 64, "\(bad.error)")
        }

        /// A handle job lost with its worker has an unknown outcome: a retry with the same key runs it again (it is
        /// not a replay of the `worker-lost` error).
        @Test func aRetryAfterWorkerLostRunsTheJobAgain() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("doomed")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let key = UUID().uuidString
            let lost = client.send(
                intent: payment("pay 7", delayMs: 1500), phase: .handle, deadline: .seconds(30), requestID: "lost",
                idempotencyKey: key)
            try await client.waitUntilRunning("lost", on: "doomed")
            cluster.signal("doomed", SIGKILL)
            let ending = try #require(try await Cluster.replies(lost).last)
            #expect(ending.errorCode == "worker-lost")
            try cluster.startWorker("spare")
            try await cluster.waitUntilServing(client)
            // The same intent (same body): another one would be `idempotency-conflict`.
            let retry = try await client.request(
                intent: payment("pay 7", delayMs: 1500), phase: .handle, idempotencyKey: key)
            #expect(retry.status == .final && !retry.isReplay, "\(retry.errorCode ?? "")")
            #expect(retry.body_["handle"]?["data"]?["worker"] == "spare")
        }
    }
}
