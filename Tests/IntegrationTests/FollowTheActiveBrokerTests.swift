import ConciergeCommandLine
import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Logging
import Testing
import ZeroMQ

extension EndToEnd {
    /// Clients and workers given several broker endpoints follow the active broker (failover): broker A
    /// on one endpoint pair with a SQLite journal is killed, broker B starts on another pair with the same journal,
    /// and what A accepted is finished by B — the request in flight gets its final reply, the worker registers with
    /// B, and `concierge send --broker f1,f2` prints its final. Also: a client whose first endpoint is never bound
    /// works through the second, and a request in flight survives a restart of its only broker that came after the
    /// client's liveness ran out.
    @Suite(.serialized) struct FollowTheActiveBrokerTests {
        func echo(_ text: String, delayMs: Int = 0, in phase: String = "handle") -> JSONValue {
            [
                "type": "Echo",
                "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs)), "delayPhase": .string(phase)],
            ]
        }

        /// A loopback TCP endpoint on a port the kernel chose and nobody listens on now.
        static func freeEndpoint() throws -> String {
            let context = ZMQContext()
            defer { context.terminate() }
            let socket = try ZMQSocket(context: context, type: .router)
            defer { socket.close() }
            try socket.bind("tcp://127.0.0.1:*")
            return try socket.stringOption(.lastEndpoint)
        }

        /// A client over `endpoints` whose log lines are recorded.
        func client(_ endpoints: [String], log: LogRecorder) throws -> ConciergeClient {
            try ConciergeClient(
                configuration: .init(brokerEndpoints: endpoints, heartbeatInterval: .milliseconds(250)),
                logger: Logger(label: "test.client") { _ in LogRecorder.Handler(recorder: log) })
        }

        func brokerArguments(frontend: String, backend: String, journal: String) -> [String] {
            [
                "broker", "--frontend", frontend, "--backend", backend, "--heartbeat-ms", "250", "--journal", journal,
                "--hard-limit-ms", "60000",
            ]
        }

        @Test func aRequestInFlightFollowsTheActiveBrokerToTheOneThatTakesOver() async throws {
            let cluster = try Cluster()
            let (frontend1, backend1) = (try Self.freeEndpoint(), try Self.freeEndpoint())
            let (frontend2, backend2) = (try Self.freeEndpoint(), try Self.freeEndpoint())
            let journal = cluster.directory.appendingPathComponent("journal.sqlite").path
            #expect(try runConcierge(["journal", "init", journal]).status == 0)
            try cluster.start("broker", brokerArguments(frontend: frontend1, backend: backend1, journal: journal))
            try cluster.start(
                "w1",
                [
                    "worker", "--broker", "\(backend1),\(backend2)", "--name", "w1", "--capacity", "4",
                    "--heartbeat-ms", "250",
                ])
            let log = LogRecorder()
            let client = try client([frontend1, frontend2], log: log)
            defer { client.close() }
            try await cluster.waitUntilServing(client)

            // In flight at the crash: a request of this client, and one of `concierge send` (a process of its own).
            // Resolves: a job of another phase than handle that was running when its broker died runs again (a
            // handle job would end `outcome-unknown`, Docs/JOURNAL.md).
            let slow = client.send(
                intent: echo("slow", delayMs: 3000, in: "resolve"), phase: .resolve, deadline: .seconds(30),
                requestID: "slow")
            try await client.waitUntilRunning("slow", on: "w1")
            try cluster.start(
                "send",
                [
                    "send", "--broker", "\(frontend1),\(frontend2)", "--phase", "resolve", "--deadline-ms", "100",
                    "--heartbeat-ms", "250", "--timeout", "120",
                    #"{"type": "Echo", "parameters": {"text": "from the cli", "delayMs": 3000, "delayPhase": "resolve"}}"#,
                ])
            try await waitUntil("concierge send's request runs\n\(cluster.log("send"))") {
                cluster.log("send").contains(#""state":"running""#)
            }

            cluster.signal("broker", SIGKILL)
            #expect(await cluster.waitForExit("broker") != nil)
            let killed = ContinuousClock.now
            try cluster.start(
                "broker-b", brokerArguments(frontend: frontend2, backend: backend2, journal: journal))

            try await waitUntil("the client connects to broker B\n\(log.all.joined(separator: "\n"))") {
                log.contains("connected to the broker", frontend2)
            }
            print("the client was connected to broker B \(ContinuousClock.now - killed) after A died")
            let replies = try await Cluster.replies(slow)
            let ending = try #require(replies.last)
            #expect(
                ending.status == .final && ending.body_["resolve"]?["text"]?["value"] == "slow",
                "\(ending.body_)\nclient:\n\(log.all.joined(separator: "\n"))\nbroker B:\n\(cluster.log("broker-b"))")
            print(
                "the request in flight got its final reply from broker B \(ContinuousClock.now - killed) after A died")
            #expect(log.contains("moving to the next broker endpoint", frontend2))

            let sent = await cluster.waitForExit("send", seconds: 60)
            let sendLog = cluster.log("send")
            #expect(sent == 0, "concierge send: \(sendLog)")
            #expect(sendLog.contains(#""status":"final""#) && sendLog.contains("from the cli"), "\(sendLog)")

            // The worker registered with B: a new request is served (B has no other worker).
            let after = try await client.request(intent: echo("after"), phase: .handle, deadline: .seconds(30))
            #expect(after.status == .final, "\(after.body_)")
            #expect(cluster.log("w1").contains("moving to the next broker endpoint"), "\(cluster.log("w1"))")
        }

        @Test func aClientAndAPoolWhoseFirstEndpointIsNeverBoundWorkThroughTheSecond() async throws {
            let cluster = try Cluster()
            let (frontend1, backend1) = (try Self.freeEndpoint(), try Self.freeEndpoint())
            let (frontend2, backend2) = (try Self.freeEndpoint(), try Self.freeEndpoint())
            try cluster.start(
                "broker",
                ["broker", "--frontend", frontend2, "--backend", backend2, "--heartbeat-ms", "250"])
            // A pool passes the list on to its workers.
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", "\(backend1),\(backend2)", "--workers", "1", "--control", cluster.control,
                    "--heartbeat-ms", "250",
                ])
            let log = LogRecorder()
            let client = try client([frontend1, frontend2], log: log)
            defer { client.close() }
            let started = ContinuousClock.now
            try await cluster.waitUntilServing(client)
            print("served through the second endpoint \(ContinuousClock.now - started) after the client was made")
            let reply = try await client.request(intent: echo("second"), phase: .handle)
            #expect(reply.status == .final)
            #expect(log.contains("moving to the next broker endpoint", frontend2), "\(log.all)")
            let cli = try runConcierge([
                "send", "--broker", "\(frontend1),\(frontend2)", "--phase", "handle", "--heartbeat-ms", "250",
                #"{"type": "Echo", "parameters": {"text": "cli"}}"#,
            ])
            #expect(cli.status == 0 && cli.output.contains(#""status":"final""#), "\(cli.output)\(cli.error)")
            // `concierge load` runs against the endpoint whose broker answers.
            let load = try runConcierge([
                "load", "--broker", "\(frontend1),\(frontend2)", "--requests", "20", "--concurrency", "2",
                "--warmup", "0s", "--deadline-ms", "30000", "--json", "--quiet",
            ])
            #expect(load.status == 0, "\(load.error)")
            let summary = try JSONValue.parse(load.output)
            #expect(summary["outcomes"]?["final.handle.success"]?.intValue == 20, "\(load.output)")
        }

        @Test func aRequestInFlightSurvivesARestartOfItsOnlyBrokerAfterTheClientsLivenessRanOut() async throws {
            let cluster = try Cluster()
            let journal = cluster.directory.appendingPathComponent("journal.sqlite").path
            #expect(try runConcierge(["journal", "init", journal]).status == 0)
            let arguments = brokerArguments(frontend: cluster.frontend, backend: cluster.backend, journal: journal)
            try cluster.start("broker", arguments)
            try cluster.startWorker("w1")
            let log = LogRecorder()
            let client = try client([cluster.frontend], log: log)
            defer { client.close() }
            try await cluster.waitUntilServing(client)
            let slow = client.send(
                intent: echo("survives", delayMs: 2000, in: "resolve"), phase: .resolve, deadline: .seconds(30),
                requestID: "slow")
            try await client.waitUntilRunning("slow", on: "w1")
            cluster.signal("broker", SIGKILL)
            #expect(await cluster.waitForExit("broker") != nil)
            let killed = ContinuousClock.now
            // Until now a client failed its requests here (connection-lost); now it keeps looking for a broker.
            try await waitUntil("the client noticed the broker's silence\n\(log.all)") {
                log.contains("the broker went silent")
            }
            print("the client noticed the silence \(ContinuousClock.now - killed) after the broker died")
            try cluster.start("broker-2", arguments)
            let ending = try #require(try await Cluster.replies(slow).last)
            #expect(
                ending.status == .final && ending.body_["resolve"]?["text"]?["value"] == "survives",
                "\(ending.body_)\nclient:\n\(log.all.joined(separator: "\n"))")
            print("the request in flight got its final reply \(ContinuousClock.now - killed) after the broker died")
        }

        @Test func brokerListsAreParsed() throws {
            #expect(try BrokerEndpointList.parse("tcp://a:1") == ["tcp://a:1"])
            #expect(try BrokerEndpointList.parse("tcp://a:1,tcp://b:2") == ["tcp://a:1", "tcp://b:2"])
            #expect(try BrokerEndpointList.parse(" tcp://a:1 , tcp://b:2") == ["tcp://a:1", "tcp://b:2"])
            for bad in [
                "", ",", "tcp://a:1,", ",tcp://a:1", "tcp://a:1,,tcp://b:2", "tcp://a:1, ", "tcp://a:1,tcp://a:1",
            ] {
                #expect(throws: (any Error).self, "\(bad)") { try BrokerEndpointList.parse(bad) }
            }
        }

        @Test func brokerListsAreValidated() throws {
            for command in [["send", "{}"], ["worker"], ["load", "--requests", "1"], ["pool"]] {
                for bad in ["tcp://127.0.0.1:1,,tcp://127.0.0.1:2", ",tcp://127.0.0.1:1", "tcp://127.0.0.1:1,", ""] {
                    let result = try runConcierge([command[0], "--broker", bad] + command.dropFirst())
                    #expect(result.status == 64, "\(command[0]) --broker '\(bad)': \(result.status) \(result.error)")
                    #expect(result.error.contains("--broker"), "\(result.error)")
                }
            }
            let twice = try runConcierge(["send", "--broker", "ipc:///tmp/a,ipc:///tmp/a", "{}"])
            #expect(twice.status == 64 && twice.error.contains("twice"), "\(twice.error)")
        }
    }
}
