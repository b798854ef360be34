import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// A broker killed and started again under clients with requests in flight: libzmq reconnects silently and the
    /// new broker answers PING, so only the STATUS sweep after the reconnect (PROTOCOL.md 7.2) tells the clients
    /// that their requests are gone. The clients' heartbeats are slow (liveness 15 s), so that `connection-lost`
    /// cannot be what ends the requests within these tests' bounds.
    @Suite(.serialized) struct BrokerRestartTests {
        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        /// Kills the broker by pid, waits until it is gone, and starts a new one on the same endpoints; returns when
        /// the new one was started.
        func restartBroker(_ cluster: Cluster) async throws -> ContinuousClock.Instant {
            cluster.signal("broker", SIGKILL)
            #expect(await cluster.waitForExit("broker") != nil)
            try cluster.startBroker()
            return ContinuousClock.now
        }

        /// How `stream` ended (its replies, or the error it threw); nil if it had not ended after `limit` (a bound on
        /// a hang, not an ordering).
        func ending(of stream: ConciergeClient.ReplyStream, within limit: Duration) async -> Result<[Reply], any Error>?
        {
            await withTaskGroup(of: Result<[Reply], any Error>?.self) { group in
                group.addTask {
                    do {
                        return .success(try await Cluster.replies(stream))
                    } catch {
                        return .failure(error)
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        @Test func sendExitsWithBrokerRestartedSoonAfterTheBrokerRestarts() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            try await cluster.waitUntilServing(cluster.client())
            // The job runs for a minute; its progress reply (deadline 100 ms) says the broker has it.
            try cluster.start(
                "send",
                [
                    "send", "--broker", cluster.frontend, "--phase", "handle", "--deadline-ms", "100",
                    "--heartbeat-ms", "5000", "--timeout", "120",
                    #"{"type": "Echo", "parameters": {"text": "lost", "delayMs": 60000}}"#,
                ]
            )
            try await waitUntil("concierge send printed a progress reply\n\(cluster.log("send"))") {
                cluster.log("send").contains(#""status":"progress""#)
            }
            #expect(cluster.log("send").contains(#""state":"running""#))
            let restarted = try await restartBroker(cluster)
            let status = await cluster.waitForExit("send", seconds: 30)
            let took = ContinuousClock.now - restarted
            let log = cluster.log("send")
            #expect(status == 3, "concierge send: \(log)\nbroker:\n\(cluster.log("broker"))")
            #expect(took < .seconds(10), "concierge send ended \(took) after the restart")
            #expect(log.contains("broker-restarted"), "\(log)")
            #expect(!log.contains(#""status":"final""#) && !log.contains(#""status":"error""#))
        }

        @Test func aRequestTheNewBrokerDoesNotKnowEndsWithBrokerRestartedAndOneItKnowsGoesOn() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            let client = try ConciergeClient(
                configuration: .init(brokerEndpoint: cluster.frontend, heartbeatInterval: .seconds(5))
            )
            try await cluster.waitUntilServing(client)
            let lost = client.send(
                intent: echo(["text": "lost", "delayMs": 60000]), phase: .handle, deadline: .milliseconds(100),
                requestID: "lost"
            )
            try await client.waitUntilRunning("lost", on: "w1")
            cluster.signal("broker", SIGKILL)
            #expect(await cluster.waitForExit("broker") != nil)
            // Sent while no broker runs: queued in the connection's pipe, so the new broker gets it before the
            // sweep's STATUS about it (and answers `progress`, not `unknown-request`).
            let queued = client.send(
                intent: echo(["text": "queued", "delayMs": 300]), phase: .handle, deadline: .seconds(30),
                requestID: "queued"
            )
            // A long startup grace: "queued" waits for the worker to register again, however slow the machine.
            try cluster.startBroker(["--startup-grace-ms", "30000"])
            let restarted = ContinuousClock.now
            switch await ending(of: lost, within: .seconds(30)) {
            case .failure(let error as ClientError):
                #expect(error.code == .brokerRestarted, "\(error)")
                #expect(error.message.contains("no longer knows"))
            case let other:
                Issue.record("the lost request ended with \(String(describing: other)) instead of broker-restarted")
            }
            let took = ContinuousClock.now - restarted
            #expect(took < .seconds(10), "the lost request ended \(took) after the restart")
            // The request the new broker knows is not ended by the sweep: exactly one ending, its final reply.
            let replies = try #require(await ending(of: queued, within: .seconds(30))).get()
            #expect(replies.filter(\.isFinal).count == 1)
            #expect(replies.last?.status == .final, "\(replies.map(\.body_))\nbroker:\n\(cluster.log("broker"))")
            #expect(replies.last?.body_["handle"]?["data"]?["text"] == "queued")
            // And the client carries on.
            let after = try await client.request(intent: echo(["text": "after"]), phase: .handle)
            #expect(after.body_["handle"]?["data"]?["text"] == "after")
            let status = try await client.status(of: "lost")
            #expect(status.errorCode == "unknown-request")
        }
    }
}
