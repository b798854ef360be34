import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// What other ZeroMQ brokers get wrong: replies to vanished peers, restarted peers reusing a routing id, and
    /// brokers restarting under connected clients and workers.
    @Suite(.serialized) struct ReconnectionTests {
        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        @Test func restartedWorkerReusingItsNameTakesOverAtOnceAndItsPredecessorsJobsAreRedispatched() async throws {
            let cluster = try Cluster()
            // Heartbeats so slow that expiry (3 x 5 s) cannot be what recovers the job within this test.
            try cluster.start(
                "broker",
                ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--heartbeat-ms", "5000"]
            )
            try cluster.start(
                "old", ["worker", "--broker", cluster.backend, "--name", "same-name", "--heartbeat-ms", "5000"]
            )
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let stream = client.send(
                intent: echo(["text": "survives", "delayMs": 1500, "delayPhase": "resolve"]), phase: .resolve,
                deadline: .milliseconds(200), requestID: "handover"
            )
            try await client.waitUntilRunning("handover", on: "same-name")
            // The old process hangs with its connection still open (as after a crash behind a NAT or a VM pause)...
            cluster.signal("old", SIGSTOP)
            defer { cluster.signal("old", SIGCONT) }
            // ...and its replacement comes up under the same name: ROUTER_HANDOVER lets it take the routing id over.
            try cluster.start(
                "new", ["worker", "--broker", cluster.backend, "--name", "same-name", "--heartbeat-ms", "5000"]
            )
            let replies = try await withThrowingTaskGroup(of: [Reply]?.self) { group in
                group.addTask { try await Cluster.replies(stream) }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))  // a bound on a hang, not an ordering
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first ?? []
            }
            #expect(replies.first?.status == .progress)
            let final = replies.last
            #expect(final?.status == .final, "broker log:\n\(cluster.log("broker"))")
            #expect(final?.body_["resolve"]?["text"]?["value"] == "survives")
            #expect(cluster.log("broker").contains("re-registered"))
        }

        @Test func aReplyToAClientThatWentAwayIsKeptForItsStatusQuery() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            // Capacity 1: a later job starts only after the earlier one ended (see below).
            try cluster.startWorker("w1", capacity: 1)
            let configuration = ClientConfiguration(
                brokerEndpoint: cluster.frontend, routingID: "steady-client", heartbeatInterval: .milliseconds(250)
            )
            var first: ConciergeClient? = try ConciergeClient(configuration: configuration)
            try await cluster.waitUntilServing(first!)
            let stream = first!.send(
                intent: echo(["text": "kept", "delayMs": 600]), phase: .handle, deadline: .milliseconds(100),
                requestID: "remember-me"
            )
            var iterator = stream.makeAsyncIterator()
            #expect(try await iterator.next()?.status == .progress)
            first?.close()
            first = nil
            // The final reply is sent while no client holds the routing id (ROUTER_MANDATORY: not silently lost).
            // Another client's request, queued behind it on the only worker slot, ends after it: by then the reply
            // had nowhere to go.
            let bystander = try cluster.client()
            let after = try await bystander.request(
                intent: echo(["text": "after"]), phase: .handle, deadline: .seconds(30))
            #expect(after.status == .final)
            let second = try ConciergeClient(configuration: configuration)
            let status = try await second.status(of: "remember-me")
            #expect(status.status == .final)
            #expect(status.body_["handle"]?["data"]?["text"] == "kept")
        }

        /// Section 7.1: a worker whose connection dropped (its broker was killed and another bound the endpoint)
        /// does not deliver the results of the old broker's jobs to the new one: it registers again on a new
        /// connection and drops them.
        @Test func resultsOfJobsFromADeadBrokerNeverReachItsSuccessor() async throws {
            let cluster = try Cluster()
            // Long heartbeats: only the dropped connection can tell the worker that its broker changed.
            let broker = [
                "broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--heartbeat-ms", "10000",
            ]
            try cluster.start("broker", broker)
            try cluster.start(
                "w1",
                [
                    "worker", "--broker", cluster.backend, "--name", "w1", "--heartbeat-ms", "10000", "--log-level",
                    "debug",
                ])
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let old = client.send(
                intent: echo(["text": "old", "delayMs": 1500]), phase: .handle, deadline: .seconds(30), requestID: "old"
            )
            try await client.waitUntilRunning("old", on: "w1")
            // Dispatched is not delivered: the JOB could still be in the broker's queue when it is killed.
            try await waitUntil("the worker starts the job\n\(cluster.log("w1"))") {
                cluster.log("w1").split(separator: "\n").contains {
                    $0.contains("job started") && $0.contains("handle")
                }
            }
            cluster.signal("broker", SIGKILL)
            _ = await cluster.waitForExit("broker")
            try cluster.start("broker2", broker)
            // The job ends on the worker 1.5 s after it started, and its result goes nowhere.
            try await waitUntil("the worker drops the old job's result\n\(cluster.log("w1"))") {
                cluster.log("w1").contains("dropped results of jobs from a lost connection")
            }
            try await cluster.waitUntilServing(client)
            let reply = try await client.request(intent: echo(["text": "new"]), phase: .handle)
            #expect(reply.body_["handle"]?["data"]?["text"] == "new")
            cluster.signal("broker2", SIGTERM)
            _ = await cluster.waitForExit("broker2")
            let log = cluster.log("broker2")
            #expect(log.contains("strayResults: 0"), "\(log)")
        }

        @Test func clientsAndWorkersCarryOnAfterTheBrokerRestarts() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.start(
                "w1",
                ["worker", "--broker", cluster.backend, "--name", "w1", "--heartbeat-ms", "250"]
            )
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let inFlight = client.send(
                intent: echo(["delayMs": 3000]), phase: .handle, deadline: .seconds(30), requestID: "in-flight")
            try await client.waitUntilRunning("in-flight", on: "w1")
            cluster.signal("broker", SIGKILL)
            _ = await cluster.waitForExit("broker")
            // The request in flight fails clearly instead of hanging.
            await #expect(throws: ClientError.self) { _ = try await Cluster.replies(inFlight) }
            try cluster.startBroker()
            // The worker notices, reconnects with backoff and registers again; the client reconnects by itself.
            try await cluster.waitUntilServing(client)
            let reply = try await client.request(intent: echo(["text": "back"]), phase: .handle)
            #expect(reply.body_["handle"]?["data"]?["text"] == "back")
            #expect(
                cluster.log("w1").contains("broker lost; reconnecting") || cluster.log("w1").contains("register again"))
        }
    }
}
