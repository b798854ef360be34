import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentBroker
import IntentClient
import IntentWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// CURVE end to end: listed clients and workers talk through the broker; unlisted ones, clients without CURVE,
    /// and keys used in the wrong role are refused during the handshake — they never submit a request, never
    /// register, and never receive a job.
    @Suite(.serialized) struct CurveSecurityTests {
        static let echo: JSONValue = ["type": "Echo", "parameters": ["text": "over curve"]]

        /// A client without keys talking to a CURVE broker fails its handshake: at once with a mechanism mismatch, or,
        /// when the broker closes the connection first (libzmq then retries), as a lost connection naming the failed
        /// handshake (once the client's reconnect timeout is over: it keeps looking for a broker until then).
        static func isHandshakeFailure(_ error: ClientError?) -> Bool {
            guard let error else { return false }
            return error.code == .handshakeFailed
                || (error.code == .connectionLost && error.message.contains("the last handshake failed"))
        }

        /// A client with a short reconnect timeout (2 s instead of 10 s): a refused handshake that libzmq retries
        /// ends in `connection-lost` after it, and these tests wait for that.
        func client(_ endpoint: String, _ keys: CurveClientKeys?) throws -> ConciergeClient {
            try ConciergeClient(
                configuration: .init(
                    brokerEndpoint: endpoint, heartbeatInterval: .milliseconds(250), reconnectTimeout: .seconds(2),
                    curve: keys)
            )
        }

        /// The broker, a pool (whose `concierge-worker` processes get the keys through `concierge pool`'s flags) and
        /// a client, all with CURVE, from the command line's key files.
        @Test func listedClientGetsRepliesFromAListedPoolOverCurve() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            try cluster.startBroker(keys.brokerArguments)
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", cluster.backend, "--workers", "1", "--control", cluster.control,
                    "--heartbeat-ms",
                    "250",
                ]
                    + keys.peerArguments("workers/pool")
            )
            let client = try client(cluster.frontend, keys.clientKeys(keys.client))
            try await cluster.waitUntilServing(client)
            let reply = try await client.request(intent: Self.echo, phase: .handle)
            #expect(reply.status == .final)
            #expect(reply.body_["handle"]?["data"]?["text"]?.stringValue == "over curve")
            #expect(cluster.log("broker").contains("CURVE on"))
            #expect(!cluster.log("broker").contains("CURVE handshake rejected"))

            // The load client with the client's keys is served; without keys it cannot even get a PONG.
            let load = [
                "load", "--broker", cluster.frontend, "--concurrency", "2", "--requests", "20", "--warmup", "0s",
                "--json", "--quiet",
            ]
            let listed = try runConcierge(load + keys.peerArguments("client"))
            #expect(listed.status == 0, "\(listed.error)")
            let summary = try JSONValue.parse(listed.output)
            #expect(summary["outcomes"]?["final.handle.success"]?.intValue == 20, "\(listed.output)")
            let plain = try runConcierge(load + ["--connect-timeout", "500ms"])
            #expect(plain.status == 2)
            #expect(plain.error.contains("did not answer PING"))
            // Plain: no ZAP request at all.
            #expect(cluster.log("broker").contains("CURVE handshake rejected") == false)
        }

        /// `concierge up` with CURVE: the broker's keys and allowlists, and the key its workers use.
        @Test func upRunsABrokerAndWorkersWithCurve() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            try cluster.start(
                "up",
                [
                    "up", "--frontend", cluster.frontend, "--backend", cluster.backend, "--control", cluster.control,
                    "--workers", "1", "--heartbeat-ms", "250", "--curve-server-key", keys.path("broker.pub"),
                    "--worker-secret-key", keys.path("workers/pool.secret"),
                ] + keys.brokerArguments
            )
            defer { cluster.signal("up", SIGTERM) }
            let client = try client(cluster.frontend, keys.clientKeys(keys.client))
            try await cluster.waitUntilServing(client)
            #expect(try await client.request(intent: Self.echo, phase: .handle).status == .final)
            // Without the client's keys, the same broker is closed.
            let plain = try self.client(cluster.frontend, nil)
            let error = await #expect(throws: ClientError.self) { try await plain.request(intent: Self.echo) }
            #expect(Self.isHandshakeFailure(error), "\(String(describing: error))")
            cluster.signal("up", SIGTERM)
            #expect(await cluster.waitForExit("up") == 0)
        }

        @Test func unlistedClientsAndWorkerKeysOnTheFrontendCannotSubmit() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            let broker = try InProcessBroker(curve: keys.brokerConfiguration)
            try cluster.startWorker(
                "w1", keys.peerArguments("workers/pool") + ["--broker", broker.broker.backendEndpoint])

            // The rogue's handshake is refused by the ZAP handler (status 400), positively, before any frame flows.
            let rogue = try RawCurvePeer(endpoint: broker.broker.frontendEndpoint, keys: keys.clientKeys(keys.rogue))
            let body = #"{"intent":{"type":"Echo","parameters":{"text":"sneaky"}}}"#
            // A malformed message first: had the broker received anything, it would count it (checked below).
            try rogue.send(["CIPC01"])
            try rogue.send(["CIPC01", "REQUEST", "r1", "Echo", "handle", "", body])
            let refused = try rogue.handshake()
            #expect(refused?.kind == .handshakeFailedAuth)
            #expect(refused?.value == 400)
            // A worker's key is not a client's: refused on the frontend as well.
            let workerAsClient = try RawCurvePeer(
                endpoint: broker.broker.frontendEndpoint, keys: keys.clientKeys(keys.worker)
            )
            try workerAsClient.send(["CIPC01"])
            try workerAsClient.send(["CIPC01", "PING"])
            #expect(try workerAsClient.handshake()?.kind == .handshakeFailedAuth)
            // The Swift client reports the refusal instead of waiting for a reply that cannot come.
            let rogueClient = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.rogue))
            let error = await #expect(throws: ClientError.self) { try await rogueClient.request(intent: Self.echo) }
            #expect(error?.code == .handshakeFailed)
            #expect(error?.message.contains("allowlist") == true)
            #expect(try rogue.receiveAll(forMilliseconds: 300).isEmpty)
            #expect(try workerAsClient.receiveAll(forMilliseconds: 0).isEmpty)

            // The listed client on the same broker is served.
            let listed = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.client))
            try await cluster.waitUntilServing(listed)
            #expect(try await listed.request(intent: Self.echo, phase: .handle).status == .final)

            let statistics = try await broker.stop()
            #expect(statistics.rejectedHandshakes == 3)
            // Nothing from the refused peers reached the broker: it would have counted their malformed messages.
            #expect(statistics.malformedClientMessages == 0)
            #expect(
                broker.log.contains(
                    "warning", "CURVE handshake rejected", "domain=concierge-clients", "key=\(keys.rogue.publicKey.z85)"
                )
            )
            #expect(
                broker.log.contains(
                    "warning", "CURVE handshake rejected", "domain=concierge-clients",
                    "key=\(keys.worker.publicKey.z85)"
                )
            )
        }

        /// With CURVE, an idempotency key is scoped to the client's public key (PROTOCOL.md 4.10): the same key from
        /// another listed client is another key.
        @Test func idempotencyKeysAreScopedToTheClientsCurveKey() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            // The rogue's key listed too: two clients with keys of their own.
            try "\(keys.client.publicKey.z85)\n\(keys.rogue.publicKey.z85)\n".write(
                toFile: keys.path("clients.txt"), atomically: false, encoding: .utf8)
            let broker = try InProcessBroker(curve: keys.brokerConfiguration)
            try cluster.startWorker(
                "w1", keys.peerArguments("workers/pool") + ["--broker", broker.broker.backendEndpoint])
            let alice = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.client))
            let bob = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.rogue))
            try await cluster.waitUntilServing(alice)
            let key = "same-key-\(UInt32.random(in: 0...UInt32.max))"
            let first = try await alice.request(intent: Self.echo, phase: .handle, idempotencyKey: key)
            #expect(first.status == .final && !first.isReplay)
            #expect(try await alice.request(intent: Self.echo, phase: .handle, idempotencyKey: key).isReplay)
            let other = try await bob.request(intent: Self.echo, phase: .handle, idempotencyKey: key)
            #expect(other.status == .final && !other.isReplay)
            #expect(other.body != first.body)
            _ = try await broker.stop()
        }

        @Test func aClientWithoutCurveCannotTalkToACurveBroker() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            let broker = try InProcessBroker(curve: keys.brokerConfiguration)
            let plain = try RawCurvePeer(endpoint: broker.broker.frontendEndpoint, keys: nil)
            try plain.send(["CIPC01"])
            try plain.send(["CIPC01", "PING"])
            let failure = try #require(try plain.handshake())
            #expect(ZMQMonitorEvent.Kind.handshakeFailures.contains(failure.kind), "\(failure)")
            #expect(try plain.receiveAll(forMilliseconds: 300).isEmpty)  // no PONG
            let plainClient = try client(broker.broker.frontendEndpoint, nil)
            let error = await #expect(throws: ClientError.self) { try await plainClient.request(intent: Self.echo) }
            #expect(Self.isHandshakeFailure(error), "\(String(describing: error))")
            // Nor can a listed client that has the wrong server key: the broker cannot read its HELLO.
            let misled = try client(
                broker.broker.frontendEndpoint, CurveClientKeys(serverKey: keys.rogue.publicKey, keyPair: keys.client)
            )
            let misledError = await #expect(throws: ClientError.self) { try await misled.request(intent: Self.echo) }
            #expect(Self.isHandshakeFailure(misledError), "\(String(describing: misledError))")
            let statistics = try await broker.stop()
            #expect(statistics.requestsAccepted == 0)
            #expect(statistics.malformedClientMessages == 0)
        }

        @Test func rogueWorkersNeverRegisterNorReceiveJobs() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            let broker = try InProcessBroker(curve: keys.brokerConfiguration) { $0.startupGracePeriod = .zero }
            let backend = broker.broker.backendEndpoint
            func ready(_ name: String, _ intentType: String) -> [String] { ["CIPW01", "READY", "4", name, intentType] }

            // Two rogues offer to serve an intent type nobody else serves: one with an unlisted key, one with the
            // listed *client* key (a client key cannot register as a worker).
            let unlisted = try RawCurvePeer(endpoint: backend, keys: keys.clientKeys(keys.rogue), routingID: "rogue-1")
            try unlisted.send(ready("rogue-1", "RogueOnly"))
            let clientKeyAsWorker = try RawCurvePeer(
                endpoint: backend, keys: keys.clientKeys(keys.client), routingID: "rogue-2"
            )
            try clientKeyAsWorker.send(ready("rogue-2", "RogueOnly"))
            #expect(try unlisted.handshake()?.kind == .handshakeFailedAuth)
            #expect(try clientKeyAsWorker.handshake()?.kind == .handshakeFailedAuth)
            // A listed worker (raw, the same frames) registers for its own type.
            let listedWorker = try RawCurvePeer(
                endpoint: backend, keys: keys.clientKeys(keys.worker), routingID: "good")
            try listedWorker.send(ready("good", "ListedOnly"))
            #expect(try listedWorker.handshake()?.kind == .handshakeSucceeded)

            let client = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.client))
            let rogueRequest: JSONValue = ["type": "RogueOnly", "parameters": ["card": "4111 1111 1111 1111"]]
            let refused = try await client.request(intent: rogueRequest, phase: .handle)
            #expect(refused.errorCode == "unknown-intent")

            // The listed worker gets the JOB for its type (give its READY a moment, as a pool would).
            var job: [String]?
            for attempt in 0..<20 where job == nil {
                let stream = client.send(
                    intent: ["type": "ListedOnly", "parameters": [:]], phase: .resolve, requestID: "listed-\(attempt)"
                )
                let messages = try listedWorker.receiveAll(forMilliseconds: 200)
                job = messages.first { $0.count >= 4 && $0[1] == "JOB" }
                if job == nil { _ = try? await Cluster.replies(stream) }
            }
            #expect(job?[3] == "ListedOnly")

            // The rogues never got anything: no JOB, no HEARTBEAT, not even an ERROR.
            #expect(try unlisted.receiveAll(forMilliseconds: 300).isEmpty)
            #expect(try clientKeyAsWorker.receiveAll(forMilliseconds: 0).isEmpty)
            let statistics = try await broker.stop()
            #expect(statistics.workersRegistered == 1)
            #expect(statistics.malformedWorkerMessages == 0)
            #expect(statistics.rejectedHandshakes == 2)
            #expect(
                broker.log.contains(
                    "CURVE handshake rejected", "domain=concierge-workers", "key=\(keys.client.publicKey.z85)",
                    "not on the worker allowlist"
                )
            )
        }

        /// A peer hammering the broker with refused handshakes is counted every time but cannot flood the log: at
        /// most 20 warnings a second, and the next warning says how many were not logged.
        @Test func refusalsAreAllCountedAndTheirWarningsRateLimited() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            let broker = try InProcessBroker(curve: keys.brokerConfiguration)
            var attempts = 0
            func refused() throws {
                let rogue = try RawCurvePeer(
                    endpoint: broker.broker.frontendEndpoint, keys: keys.clientKeys(keys.rogue))
                #expect(try rogue.handshake()?.kind == .handshakeFailedAuth)
                attempts += 1
            }
            for _ in 0..<30 { try refused() }
            // Once the second has passed, the next refusal is logged again and says how many were not: wait for that
            // (a refusal every 100 ms) rather than sleep for the window and assume it has passed.
            try await waitUntil("a warning says how many refusals were not logged", poll: .milliseconds(100)) {
                try refused()
                return broker.log.all.contains { $0.contains("not-logged-before=") }
            }
            let statistics = try await broker.stop()
            #expect(statistics.rejectedHandshakes == attempts)
            let warnings = broker.log.all.filter { $0.contains("CURVE handshake rejected") }
            let notLogged = warnings.compactMap { line -> Int? in
                guard let range = line.range(of: "not-logged-before=") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            #expect(warnings.count < attempts)
            #expect(warnings.count + notLogged.reduce(0, +) == attempts, "\(warnings)")
        }

        /// A real `concierge worker` with a client's key keeps being refused and says why; the broker never
        /// registers it.
        @Test func aWorkerProcessWithAClientKeyIsRefusedAndSaysWhy() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            try cluster.startBroker(keys.brokerArguments + ["--startup-grace-ms", "0"])
            try cluster.startWorker("rogue", keys.peerArguments("client"))
            try? await waitUntil("the worker says it was refused", poll: .milliseconds(100)) {
                cluster.log("rogue").contains("refused")
            }
            #expect(cluster.log("rogue").contains("the broker refused this worker's connection"))
            #expect(cluster.log("rogue").contains("allowlist"))
            #expect(cluster.log("broker").contains("CURVE handshake rejected"))
            #expect(!cluster.log("broker").contains("worker registered"))
            let client = try client(cluster.frontend, keys.clientKeys(keys.client))
            #expect(try await client.request(intent: Self.echo, phase: .resolve).errorCode == "unknown-intent")
        }

        @Test func malformedOrMissingKeyFilesStopEveryCommandWithAClearError() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            let bad = keys.path("bad.txt")
            try "# clients\n\(keys.client.publicKey.z85)\nnot-a-key\n".write(
                toFile: bad, atomically: false, encoding: .utf8)

            try cluster.start(
                "broker-bad-list",
                [
                    "broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--curve-secret-key",
                    keys.path("broker.secret"), "--client-keys", bad, "--worker-keys", keys.path("workers"),
                ]
            )
            #expect(await cluster.waitForExit("broker-bad-list", seconds: 10) == 1)
            #expect(
                cluster.log("broker-bad-list").contains("malformed-key: \(bad):3: a CURVE key is 40 Z85 characters"))

            let worker = try runConcierge(
                [
                    "worker", "--broker", cluster.backend, "--curve-server-key", keys.path("broker.pub"),
                    "--curve-secret-key", keys.path("missing.secret"),
                ]
            )
            #expect(worker.status != 0)
            #expect(worker.error.contains("unreadable-key-file: \(keys.path("missing.secret"))"))

            // The slim worker that pools run, too (it reads key files without Foundation).
            let slim = Process()
            slim.executableURL = Cluster.slimWorkerExecutable
            slim.arguments = [
                "--broker", cluster.backend, "--curve-server-key", keys.path("broker.pub"), "--curve-secret-key", bad,
            ]
            let slimError = Pipe()
            slim.standardError = slimError
            try slim.run()
            let slimMessage = String(decoding: slimError.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            slim.waitUntilExit()
            #expect(slim.terminationStatus == 1)  // as `concierge worker`: a runtime error, not a usage error
            #expect(slimMessage.contains("malformed-key: \(bad):3:"), "\(slimMessage)")
            let halfSlim = try runConcierge(["worker", "--curve-server-key", keys.path("broker.pub")])
            #expect(halfSlim.status != 0)
            #expect(halfSlim.error.contains("CURVE needs both"))

            let send = try runConcierge(
                [
                    "send", "--broker", cluster.frontend, "--curve-server-key", bad, "--curve-secret-key",
                    keys.path("client.secret"), #"{"type": "Echo"}"#,
                ]
            )
            #expect(send.status == 2)
            #expect(send.error.contains("malformed-key"))

            let halfConfigured = try runConcierge(
                [
                    "broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--curve-secret-key",
                    keys.path("broker.secret"),
                ]
            )
            #expect(halfConfigured.status != 0)
            #expect(halfConfigured.error.contains("--client-keys"))

            let secretAsServerKey = try runConcierge(
                [
                    "send", "--curve-server-key", keys.path("broker.secret"), "--curve-secret-key",
                    keys.path("client.secret"),
                    "{}",
                ]
            )
            #expect(secretAsServerKey.status != 0)
            #expect(secretAsServerKey.error.contains("never its secret key"))
        }
    }
}
