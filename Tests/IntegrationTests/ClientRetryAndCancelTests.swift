import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Synchronization
import Testing

extension EndToEnd {
    /// The client library's cancellation (PROTOCOL.md 4.10.2) and retry policy against a real broker and workers,
    /// and `concierge send` under Ctrl-C.
    @Suite(.serialized) struct ClientRetryAndCancelTests {
        func echo(_ text: String, delayMs: Int = 0) -> JSONValue {
            ["type": "Echo", "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs))]]
        }

        /// `body`'s result, or ``WaitTimedOut`` after `limit` (a bound on a hang, not an ordering). `body` runs in a
        /// task of its own, so that a wait that ignores cancellation cannot hold the test.
        func within<T: Sendable>(
            _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            let outcome = Mutex<Result<T, any Error>?>(nil)
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                outcome.withLock { $0 = result }
            }
            defer { task.cancel() }
            try await waitUntil(what, timeout: limit) { outcome.withLock { $0 } != nil }
            return try outcome.withLock { $0 }!.get()
        }

        @Test func cancellingTheTaskOfARequestEndsItAtTheBroker() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let slow = echo("slow", delayMs: 60_000)
            let task = Task {
                try await client.request(intent: slow, phase: .handle, deadline: .seconds(30), requestID: "slow")
            }
            try await client.waitUntilRunning("slow", on: "w1")
            task.cancel()
            let result = try await within(.seconds(30), "the cancelled request returns") { await task.result }
            #expect(throws: CancellationError.self) { try result.get() }
            // The broker ended the request: STATUS of that id answers its stored ending, `cancelled`.
            let ending = try await client.waitForStatus(of: "slow") { $0.isFinal }
            #expect(ending.errorCode == "cancelled", "\(ending.body_)\nbroker:\n\(cluster.log("broker"))")
            // The handler stopped (its worker was told, CIPW02): the capacity-1 worker takes the next job at once,
            // not after the cancelled one's minute.
            let next = try await within(.seconds(20), "the next request on the capacity-1 worker ends") {
                try await client.request(intent: echo("next"), phase: .handle, deadline: .seconds(5))
            }
            #expect(next.status == .final, "\(next.body_)")
        }

        @Test func cancelReturnsTheCancelledEndingAndTheStreamGetsItToo() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let stream = client.send(
                intent: echo("slow", delayMs: 60_000), phase: .handle, deadline: .seconds(30), requestID: "c1")
            let replies = Task { try await Cluster.replies(stream) }
            try await client.waitUntilRunning("c1", on: "w1")
            let ending = try await within(.seconds(30), "CANCEL c1 is answered") {
                try await client.cancel(requestID: "c1")
            }
            #expect(ending.errorCode == "cancelled", "\(ending.body_)")
            #expect(
                try await within(.seconds(30), "the stream ends") { try await replies.value }.last?.errorCode
                    == "cancelled")
            // CANCEL of an id this client never sent: the broker answers as STATUS would.
            let unknown = try await within(.seconds(30), "CANCEL never-sent is answered") {
                try await client.cancel(requestID: "never-sent")
            }
            #expect(unknown.errorCode == "unknown-request", "\(unknown.body_)")
            // CANCEL after the ending: the stored ending again.
            let again = try await within(.seconds(30), "CANCEL c1 is answered again") {
                try await client.cancel(requestID: "c1")
            }
            #expect(again.errorCode == "cancelled", "\(again.body_)")
        }

        @Test func sendUnderSIGINTPrintsTheCancelledReplyAndExits130() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            try await cluster.waitUntilServing(cluster.client())
            // The job runs for a minute; its progress reply (deadline 100 ms) says the broker has it.
            try cluster.start(
                "send",
                [
                    "send", "--broker", cluster.frontend, "--phase", "handle", "--deadline-ms", "100",
                    "--timeout", "120", #"{"type": "Echo", "parameters": {"text": "stop me", "delayMs": 60000}}"#,
                ]
            )
            try await waitUntil("concierge send printed a progress reply\n\(cluster.log("send"))") {
                cluster.log("send").contains(#""status":"progress""#)
            }
            cluster.signal("send", SIGINT)
            let status = await cluster.waitForExit("send", seconds: 30)
            let log = cluster.log("send")
            #expect(status == 130, "concierge send: \(log)\nbroker:\n\(cluster.log("broker"))")
            let lines = log.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            let ending = try #require(lines.last, "\(log)")
            #expect(ending["status"] == "error", "\(log)")
            #expect(ending["body"]?["code"] == "cancelled", "\(log)")
            #expect(lines.filter { $0["status"] != "progress" }.count == 1, "one ending only: \(log)")
        }

        /// A keyed handle lost with its worker is retried with the same key once another worker serves the type: the
        /// broker runs it again (its outcome was unknown), and the client returns that final reply as attempt 2.
        @Test func aRetryPolicyRetriesWorkerLostWithTheSameKeyAndEndsWithTheFinal() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("doomed", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let events = Mutex<[RequestEvent]>([])
            let policy = RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500))
            let task = Task {
                try await client.request(
                    intent: echo("pay 7", delayMs: 1500), phase: .handle, deadline: .seconds(30), requestID: "first",
                    retry: policy, events: { event in events.withLock { $0.append(event) } })
            }
            try await client.waitUntilRunning("first", on: "doomed")
            cluster.signal("doomed", SIGKILL)
            // Attempt 1 ends with worker-lost; attempt 2 waits in the queue (the type was served within the grace
            // period) until the spare worker registers.
            try await waitUntil("attempt 1 ended with worker-lost") {
                events.withLock { $0 }.contains { event in
                    if case .retrying(1, "worker-lost", _) = event { return true }
                    return false
                }
            }
            try cluster.startWorker("spare", capacity: 1)
            let reply = try await within(.seconds(60), "the retried request ends") { try await task.value }
            #expect(reply.status == .final, "\(reply.body_)\nbroker:\n\(cluster.log("broker"))")
            #expect(reply.attempts == 2)
            #expect(reply.requestID != "first")
            #expect(reply.body_["handle"]?["data"]?["worker"] == "spare")
            // The handler saw attempt 2 (CIPW02 JOB F8), and the same key.
            #expect(reply.body_["handle"]?["data"]?["attempt"] == 2, "\(reply.body_)")
            let keys = events.withLock { $0 }.compactMap { event -> String? in
                if case .sent(_, _, let key) = event { return key }
                return nil
            }
            #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "\(keys)")
            #expect(reply.body_["handle"]?["data"]?["idempotencyKey"]?.stringValue == keys.first ?? nil)
        }

        @Test func sendWithRetryPrintsTheAttempt() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            try await cluster.waitUntilServing(cluster.client())
            let result = try runConcierge([
                "send", "--broker", cluster.frontend, "--phase", "handle", "--retry", "3",
                #"{"type":"Echo","parameters":{"text":"once"}}"#,
            ])
            #expect(result.status == 0, "\(result.error)")
            let line = try JSONValue.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(line["status"] == "final")
            #expect(line["attempt"] == 1)
            let bad = try runConcierge(["send", "--broker", cluster.frontend, "--retry", "0", "{}"])
            #expect(bad.status == 64, "\(bad.error)")
        }
    }
}
