// Built with the package trait PostgreSQL only (README, "Build options"): `swift test --traits Full`.
#if PostgreSQL
    import ConciergeJSON
    import ConciergeTestKit
    import Foundation
    import IntentClient
    import IntentWire
    import Testing

    extension EndToEnd {
        /// Brokers sharing a PostgreSQL journal (`Docs/JOURNAL.md`, "Failover"), on one host: a standby takes
        /// over when the active broker is killed and finishes what it accepted; a broker whose database goes away refuses
        /// new work with `unavailable` and works again when the database is back. (The test across network namespaces,
        /// with a host cut off, is `Tests/python/test_failover.py`.)
        @Suite(.serialized) struct StandbyBrokerTests {
            func waitForLog(_ cluster: Cluster, _ name: String, _ text: String) async throws {
                try await waitUntil("\(name) logs \(text)\n\(cluster.log(name))") { cluster.log(name).contains(text) }
            }

            @Test func aStandbyTakesOverWhenTheActiveBrokerIsKilledAndFinishesWhatItAccepted() async throws {
                let server = try PostgresServer()
                let cluster = try Cluster()
                #expect(try runConcierge(["journal", "init", server.url]).status == 0)
                let frontend2 = "ipc://\(cluster.directory.path)/f2"
                let backend2 = "ipc://\(cluster.directory.path)/b2"
                let common = [
                    "--heartbeat-ms", "250", "--journal", server.url, "--standby", "--hard-limit-ms", "60000",
                ]
                try cluster.start(
                    "broker", ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend] + common)
                try await waitForLog(cluster, "broker", "broker ready")
                try cluster.start("standby", ["broker", "--frontend", frontend2, "--backend", backend2] + common)
                try await waitForLog(cluster, "standby", "standing by")
                #expect(!cluster.log("standby").contains("broker ready"), "a standby binds nothing")
                try cluster.startWorker("w1", capacity: 1)
                try cluster.start(
                    "w2", ["worker", "--broker", backend2, "--name", "w2", "--capacity", "4", "--heartbeat-ms", "250"])
                let routingID = "client-standby-test"
                let client = try ConciergeClient(
                    configuration: .init(
                        brokerEndpoint: cluster.frontend, routingID: routingID, heartbeatInterval: .milliseconds(250)))
                try await cluster.waitUntilServing(client)
                let done = try await client.request(intent: delayedEcho("before"), phase: .handle, requestID: "done")
                #expect(done.status == .final)
                // In flight at the kill: a resolve running on w1 (it runs again on the new broker's worker). Its reply
                // stream is kept until the end: a stream dropped at once tells the client its caller stopped listening,
                // and the client then sends CANCEL (which, under load, reached w1 before the job's handler started).
                let running = client.send(
                    intent: delayedEcho("slow", delayMs: 1500, in: "resolve"), phase: .resolve, deadline: .seconds(30),
                    requestID: "running")
                try await client.waitUntilRunning("running", on: "w1")
                let killed = ContinuousClock.now
                cluster.signal("broker", SIGKILL)
                _ = await cluster.waitForExit("broker")
                try await waitForLog(cluster, "standby", "broker ready")
                print("standby ready \(killed.duration(to: .now)) after the active broker's SIGKILL (loopback)")
                // The same client identity on the new broker: the request it accepted before is finished there.
                let follower = try ConciergeClient(
                    configuration: .init(
                        brokerEndpoint: frontend2, routingID: routingID, heartbeatInterval: .milliseconds(250)))
                let final = try await follower.waitForStatus(of: "running") { $0.status != .progress }
                #expect(final.status == .final, "\(final.body_)")
                #expect(final.body_["text"] == "slow" || final.body_.description.contains("slow"), "\(final.body_)")
                let stored = try await follower.status(of: "done")
                #expect(stored.status == .final && stored.body == done.body)
                // The old broker, started again, stands by: the new one holds the journal.
                try cluster.start(
                    "broker-again", ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend] + common)
                try await waitForLog(cluster, "broker-again", "standing by")
                let fresh = try await follower.request(intent: delayedEcho("after"), phase: .handle, requestID: "after")
                #expect(fresh.status == .final)
                extendLifetime(running)
            }

            @Test func aBrokerWhoseDatabaseGoesAwayRefusesNewWorkAndRecoversWhenItIsBack() async throws {
                let server = try PostgresServer()
                let cluster = try Cluster()
                let (client, done) = try await cluster.startJournaled(server.url)
                let running = client.send(
                    intent: delayedEcho("slow", delayMs: 1500, in: "resolve"), phase: .resolve, deadline: .seconds(60),
                    requestID: "running")
                try await client.waitUntilRunning("running", on: "w1")
                server.stop()
                // The broker notices within about a second (its leadership check) and refuses new work.
                var probe = 0
                try await waitUntil("a request is refused `unavailable`\n\(cluster.log("broker"))") {
                    probe += 1
                    let reply = try await client.request(
                        intent: delayedEcho("probe"), phase: .resolve, requestID: "p\(probe)")
                    return reply.errorCode == "unavailable"
                }
                let status = try await client.status(of: "done")
                #expect(status.errorCode == "unavailable", "STATUS is the journal's to answer: \(status.body_)")
                #expect(cluster.log("broker").contains("journal unavailable"))
                try server.start()
                try await waitForLog(cluster, "broker", "journal back")
                // What it accepted before the outage is finished; what it answered is still known; new work is taken.
                let ending = try #require(try await Cluster.replies(running).last)
                #expect(ending.status == .final, "\(ending.body_)")
                let stored = try await client.status(of: "done")
                #expect(stored.status == .final && stored.body == done.body)
                try await cluster.waitUntilServing(client)
            }

            @Test func aBrokerWhoseDatabaseIsUnreachableAtStartBindsAndAnswersUnavailable() async throws {
                let cluster = try Cluster()
                // Nothing listens on port 1: PostgreSQL is unreachable, and stays so.
                try cluster.startBroker(["--journal", "postgres://concierge@127.0.0.1:1/concierge"])
                let client = try cluster.client()
                let reply = try await client.request(intent: delayedEcho("x"), phase: .resolve, requestID: "r")
                #expect(reply.errorCode == "unavailable", "\(reply.body_)")
                #expect(cluster.log("broker").contains("journal unavailable"))
                cluster.signal("broker", SIGTERM)
                #expect(await cluster.waitForExit("broker") == 0)
            }

            @Test func standbyAndLogFormatFlagsAreCheckedBeforeAnythingStarts() throws {
                let standby = try runConcierge(["broker", "--journal", "/tmp/not-postgres.sqlite", "--standby"])
                #expect(standby.status == 64 && standby.error.contains("--standby needs a PostgreSQL journal"))
                let format = try runConcierge(["broker", "--log-format", "xml"])
                #expect(format.status == 64 && format.error.contains("--log-format takes text or json"))
            }
        }
    }
#endif  // PostgreSQL
