import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// Cancellation and attempts with real processes (PROTOCOL.md 4.10.2, 5.13): the broker, `concierge-worker`
    /// with the example handlers (CIPW02), and the Swift client.
    @Suite(.serialized) struct CancellationTests {
        func echo(_ text: String, delayMs: Int = 0) -> JSONValue {
            ["type": "Echo", "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs))]]
        }

        /// The hard limit cancels the handler on its worker: a capacity-1 worker whose handler would sleep for ten
        /// minutes is free again right after the `timeout`, so the next request is answered. Without the CANCEL
        /// the next request would wait behind the sleeping handler and be shed (`busy`) at its deadline.
        @Test func theHardLimitCancelsTheHandlerSoItsWorkerIsFreeAgain() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--deadline-ms", "1000", "--hard-limit-ms", "2000"])
            try cluster.startWorker("solo", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let slow = try await client.request(intent: echo("forever", delayMs: 600_000), phase: .handle)
            #expect(slow.errorCode == "timeout")
            let next = try await client.request(intent: echo("next"), phase: .handle, deadline: .seconds(2))
            #expect(next.status == .final, "\(next.errorCode ?? "") \(next.body_)")
            #expect(next.body_["handle"]?["data"]?["text"] == "next")
        }

        /// A keyed handle lost with its worker runs again as attempt 2, and the handler sees the key and the attempt
        /// (`HandlerContext.idempotencyKey`, `.attempt`: the Echo example answers them).
        @Test func aRetryAfterWorkerLostRunsAsAttemptTwoAndTheHandlerSeesIt() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("doomed")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let key = "pay-\(UUID().uuidString)"
            // Long enough to be seen running; the retry (same body, so the same delay) then takes as long.
            let lost = client.send(
                intent: echo("pay 7", delayMs: 1500), phase: .handle, deadline: .seconds(30), requestID: "lost",
                idempotencyKey: key)
            try await client.waitUntilRunning("lost", on: "doomed")
            cluster.signal("doomed", SIGKILL)
            #expect(try await Cluster.replies(lost).last?.errorCode == "worker-lost")
            try cluster.startWorker("spare")
            try await cluster.waitUntilServing(client)
            let retry = try await client.request(
                intent: echo("pay 7", delayMs: 1500), phase: .handle, deadline: .seconds(30), idempotencyKey: key)
            #expect(retry.status == .final, "\(retry.errorCode ?? "")")
            let data = retry.body_["handle"]?["data"]
            #expect(data?["worker"] == "spare")
            #expect(data?["attempt"] == 2)
            #expect(data?["idempotencyKey"] == .string(key))
        }
    }
}
