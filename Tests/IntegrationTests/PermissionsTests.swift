import ConciergeJSON
import ConciergeTestKit
import ConciergeTop
import Foundation
import IntentBroker
import IntentClient
import IntentPermissions
import IntentWire
import Testing
import ZeroMQ

/// Key pairs for the permissions tests, in the files `concierge keygen` writes: the broker's; three clients on the
/// CURVE client allowlist (`alice` and `bob` in the permissions file, `stranger` not); two workers on the worker
/// allowlist (`pool` may serve everything, `narrow` only Echo).
struct PermissionKeys {
    let directory: String
    let broker: CurveKeyPair
    let alice: CurveKeyPair
    let bob: CurveKeyPair
    let stranger: CurveKeyPair
    let pool: CurveKeyPair
    let narrow: CurveKeyPair

    init(directory: URL) throws {
        self.directory = directory.path + "/keys"
        broker = try .generate()
        alice = try .generate()
        bob = try .generate()
        stranger = try .generate()
        pool = try .generate()
        narrow = try .generate()
        try CurveKeyFile.write(broker, base: path("broker"))
        for (name, pair) in [("alice", alice), ("bob", bob), ("stranger", stranger)] {
            try CurveKeyFile.write(pair, base: path(name))
        }
        try CurveKeyFile.write(pool, base: path("workers/pool"))
        try CurveKeyFile.write(narrow, base: path("workers/narrow"))
        try [alice, bob, stranger].map(\.publicKey.z85).joined(separator: "\n").write(
            toFile: path("clients.txt"), atomically: false, encoding: .utf8)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    var brokerArguments: [String] {
        [
            "--curve-secret-key", path("broker.secret"), "--client-keys", path("clients.txt"), "--worker-keys",
            path("workers"),
        ]
    }

    var curve: BrokerCurveConfiguration {
        get throws {
            try BrokerCurveConfiguration(
                secretKeyFile: path("broker.secret"), clientKeys: path("clients.txt"), workerKeys: path("workers"))
        }
    }

    func peerArguments(_ name: String) -> [String] {
        ["--curve-server-key", path("broker.pub"), "--curve-secret-key", path(name + ".secret")]
    }

    func clientKeys(_ pair: CurveKeyPair) -> CurveClientKeys {
        CurveClientKeys(serverKey: broker.publicKey, keyPair: pair)
    }

    /// A permissions file: alice's and pool's lists as given, bob may send everything but Echo, narrow may serve
    /// only Echo; stranger is not listed.
    func document(alice aliceSend: [String], pool poolServe: [String] = ["*"]) -> String {
        func list(_ patterns: [String]) -> String { "[" + patterns.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        return """
            {"version": 1, "identities": {
              "alice": {"keys": ["\(alice.publicKey.z85)"], "send": {"allow": \(list(aliceSend))}},
              "bob": {"keys": ["\(bob.publicKey.z85)"], "send": {"allow": ["*"], "deny": ["Echo"]}},
              "pool": {"keys": ["\(pool.publicKey.z85)"], "serve": {"allow": \(list(poolServe))}},
              "narrow": {"keys": ["\(narrow.publicKey.z85)"], "serve": {"allow": ["Echo"]}}
            }}
            """
    }

    /// Writes `text` as the permissions file and returns its path.
    @discardableResult
    func writePermissions(_ text: String) throws -> String {
        try text.write(toFile: path("permissions.json"), atomically: true, encoding: .utf8)
        return path("permissions.json")
    }
}

extension EndToEnd {
    /// Permissions per identity (`Docs/PERMISSIONS.md`, PROTOCOL.md 13.3), with a real broker, real workers and
    /// clients, each with a CURVE key pair of its own.
    @Suite(.serialized) struct PermissionsTests {
        static func echo(_ text: String, delayMs: Int = 0) -> JSONValue {
            ["type": "Echo", "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs))]]
        }
        static let message: JSONValue = [
            "type": "SendMessage", "parameters": ["recipient": ["displayName": "Ann"], "content": "hi"],
        ]
        static let unknown: JSONValue = ["type": "NoSuchType", "parameters": [:]]

        func client(_ endpoint: String, _ keys: CurveClientKeys) throws -> ConciergeClient {
            try ConciergeClient(
                configuration: .init(brokerEndpoint: endpoint, heartbeatInterval: .milliseconds(250), curve: keys))
        }

        /// A broker process with CURVE, the permissions file, `--http`, and a worker with the pool's key.
        func cluster(alice: [String]) async throws -> (Cluster, PermissionKeys, port: Int) {
            let cluster = try Cluster()
            let keys = try PermissionKeys(directory: cluster.directory)
            let file = try keys.writePermissions(keys.document(alice: alice))
            try cluster.startBroker(
                keys.brokerArguments + ["--permissions", file, "--http", "127.0.0.1:0", "--startup-grace-ms", "0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("pool", capacity: 16, keys.peerArguments("workers/pool"))
            try await cluster.waitForBrokerLog("worker registered", "worker=pool")
            return (cluster, keys, port)
        }

        /// The `concierge_forbidden_total` count of `identity` and `kind`.
        func forbiddenCount(port: Int, _ identity: String, _ kind: String) throws -> Double {
            Scrape(try httpGet(port: port, "/metrics").body).sum(
                "concierge_forbidden_total", ["identity": identity, "kind": kind])
        }

        /// Each client sends only what its identity may: a forbidden type or phase is answered `forbidden`, naming
        /// the identity, the type and the phase, before anything else (a type no worker serves is not told apart),
        /// and a lifecycle or a conversation needs every phase. A listed key without an identity may send nothing.
        /// Refusals are counted per identity and logged.
        @Test func clientsSendOnlyWhatTheirIdentityMay() async throws {
            let (cluster, keys, port) = try await cluster(alice: ["Echo", "SendMessage:resolve,confirm"])
            let alice = try client(cluster.frontend, keys.clientKeys(keys.alice))
            try await cluster.waitUntilServing(alice)
            let served = try await alice.request(intent: Self.echo("allowed"), phase: .handle)
            #expect(served.status == .final, "\(served.body_)")

            let handle = try await alice.request(intent: Self.message, phase: .handle)
            #expect(handle.errorCode == "forbidden", "\(handle.body_)")
            let text = handle.body_["message"]?.stringValue ?? ""
            #expect(text.contains("\"alice\"") && text.contains("SendMessage") && text.contains("handle"), "\(text)")
            #expect(!text.contains("resolve,confirm"), "the message must not show the rules: \(text)")
            let resolve = try await alice.request(intent: Self.message, phase: .resolve)
            #expect(resolve.status == .final, "\(resolve.body_)")
            let lifecycle = try await alice.request(intent: Self.message, phase: .lifecycle)
            #expect(lifecycle.errorCode == "forbidden", "\(lifecycle.body_)")
            // Not allowed and not served: forbidden, not unknown-intent.
            #expect(try await alice.request(intent: Self.unknown, phase: .handle).errorCode == "forbidden")
            // A conversation runs the lifecycle: refused at its first turn.
            var conversationCode: String?
            do {
                conversationCode = try await alice.startConversation(intent: Self.message).reply.errorCode
            } catch let error as ClientError {
                conversationCode = error.code.rawValue
            }
            #expect(conversationCode == "forbidden")

            let bob = try client(cluster.frontend, keys.clientKeys(keys.bob))
            #expect(try await bob.request(intent: Self.echo("denied"), phase: .handle).errorCode == "forbidden")
            #expect(try await bob.request(intent: Self.unknown, phase: .handle).errorCode == "unknown-intent")
            #expect(try await bob.request(intent: Self.message, phase: .resolve).status == .final)

            let stranger = try client(cluster.frontend, keys.clientKeys(keys.stranger))
            let refused = try await stranger.request(intent: Self.echo("who"), phase: .handle)
            #expect(refused.errorCode == "forbidden")
            #expect(refused.body_["message"]?.stringValue?.contains("not in the broker's permissions file") == true)
            // Pings and STATUS still work for every admitted key.
            #expect(try await stranger.status(of: "nothing").errorCode == "unknown-request")

            #expect(try forbiddenCount(port: port, "alice", "send") == 4)
            #expect(try forbiddenCount(port: port, "bob", "send") == 1)
            #expect(try forbiddenCount(port: port, "(unlisted)", "send") == 1)
            try await cluster.waitForBrokerLog("forbidden", "identity=alice", "kind=send")
        }

        /// A worker registers only for types its identity may serve (every phase): a READY with another type is
        /// answered ERROR `forbidden` and not registered; a `concierge worker` so refused stops and says why.
        @Test func workersRegisterOnlyForTypesTheirIdentityMayServe() async throws {
            let cluster = try Cluster()
            let keys = try PermissionKeys(directory: cluster.directory)
            let permissions = try Permissions.parse(Array(keys.document(alice: ["*"]).utf8))
            let broker = try InProcessBroker(curve: keys.curve) {
                $0.permissions = permissions
                $0.startupGracePeriod = .zero
            }
            let backend = broker.broker.backendEndpoint
            let wrongType = try RawCurvePeer(endpoint: backend, keys: keys.clientKeys(keys.narrow), routingID: "n1")
            try wrongType.send(["CIPW01", "READY", "4", "n1", "SendMessage"])
            let answer = try #require(
                try wrongType.receiveAll(forMilliseconds: 2000).first { $0.count >= 3 && $0[1] == "ERROR" })
            #expect(answer[2] == "forbidden", "\(answer)")
            #expect(answer.last?.contains("\"narrow\" may not serve SendMessage") == true, "\(answer)")
            // The same key for its own type registers and gets the job.
            let echoOnly = try RawCurvePeer(endpoint: backend, keys: keys.clientKeys(keys.narrow), routingID: "n2")
            try echoOnly.send(["CIPW01", "READY", "4", "n2", "Echo"])
            let alice = try client(broker.broker.frontendEndpoint, keys.clientKeys(keys.alice))
            var job: [String]?
            for attempt in 0..<50 where job == nil {
                let stream = alice.send(intent: Self.echo("to n2"), phase: .resolve, requestID: "echo-\(attempt)")
                job = try echoOnly.receiveAll(forMilliseconds: 200).first { $0.count >= 4 && $0[1] == "JOB" }
                if job == nil { _ = try? await Cluster.replies(stream) }
            }
            #expect(job?[3] == "Echo")
            // A real worker process with the narrow key serves every example type: refused, it stops and says why.
            try cluster.startWorker("narrow", keys.peerArguments("workers/narrow") + ["--broker", backend])
            let status = await cluster.waitForExit("narrow")
            // 78 (EX_CONFIG): refused for good, so that a pool does not restart it (PROTOCOL.md 5.16).
            #expect(status == 78)
            #expect(cluster.log("narrow").contains("registration-forbidden"), "\(cluster.log("narrow"))")
            let statistics = try await broker.stop()
            #expect(statistics.forbiddenRegistrations == 2)
            #expect(statistics.workersRegistered == 1)
            #expect(broker.log.contains("forbidden", "identity=narrow", "kind=serve"))
        }

        /// A reload (`concierge permissions reload`, SIGHUP) narrows and widens access while requests are in flight:
        /// none is lost or answered twice. A file with an error is not signalled by the command, and a broker
        /// signalled anyway keeps the permissions in force. A worker the new file no longer lets serve its types
        /// is drained: the job it holds finishes.
        @Test func aReloadNarrowsAndWidensWhileRequestsAreInFlight() async throws {
            let (cluster, keys, port) = try await cluster(alice: ["Echo"])
            let alice = try client(cluster.frontend, keys.clientKeys(keys.alice))
            try await cluster.waitUntilServing(alice)
            let file = keys.path("permissions.json")
            func reload() throws {
                let result = try runConcierge(["permissions", "reload", "--pid", "\(cluster.pid("broker"))", file])
                #expect(result.status == 0, "\(result.error)")
            }
            func reloads() -> Int {
                cluster.log("broker").components(separatedBy: "permissions file reloaded").count - 1
            }
            // Ten slow requests accepted and running.
            let inFlight = (0..<10).map {
                alice.send(intent: Self.echo("slow \($0)", delayMs: 800), phase: .handle, requestID: "slow-\($0)")
            }
            for index in 0..<10 { try await alice.waitUntilRunning("slow-\(index)") }

            // Narrow: Echo is no longer alice's.
            try keys.writePermissions(keys.document(alice: ["SendMessage"]))
            try reload()
            try await waitUntil("alice's Echo is forbidden") {
                try await alice.request(intent: Self.echo("probe"), phase: .handle).errorCode == "forbidden"
            }
            #expect(try await alice.request(intent: Self.message, phase: .resolve).status == .final)
            // A file with an error: the command refuses to signal, and a signal anyway changes nothing.
            let before = reloads()
            try "{\"version\": 1, \"identities\": {\"alice\": {\"keys\": [\"short\"]}}}".write(
                toFile: file, atomically: true, encoding: .utf8)
            let bad = try runConcierge(["permissions", "reload", "--pid", "\(cluster.pid("broker"))", file])
            #expect(bad.status == 1)
            #expect(bad.error.contains("permissions-malformed") && bad.error.contains("identities.alice.keys[0]"))
            cluster.signal("broker", SIGHUP)
            try await cluster.waitForBrokerLog("permissions file refused", "permissions-malformed")
            #expect(reloads() == before)
            #expect(try await alice.request(intent: Self.echo("still no"), phase: .handle).errorCode == "forbidden")

            // Widen again.
            try keys.writePermissions(keys.document(alice: ["*"]))
            try reload()
            try await waitUntil("alice's Echo is served again") {
                try await alice.request(intent: Self.echo("again"), phase: .handle).status == .final
            }
            // Every request accepted before the changes ended once, served.
            for (index, stream) in inFlight.enumerated() {
                let replies = try await Cluster.replies(stream)
                #expect(replies.filter { $0.status != .progress }.count == 1, "slow-\(index): \(replies)")
                #expect(replies.last?.status == .final, "slow-\(index): \(replies.last?.body_ ?? .null)")
            }

            // Revoke the pool worker while it runs a job: drained, and the job finishes.
            let last = alice.send(intent: Self.echo("last", delayMs: 500), phase: .handle, requestID: "last")
            try await alice.waitUntilRunning("last")
            try keys.writePermissions(keys.document(alice: ["*"], pool: []))
            try reload()
            try await cluster.waitForBrokerLog("worker drained", "worker=pool", "identity=pool")
            try await waitUntil("the broker counts the pool worker as draining") {
                Scrape(try httpGet(port: port, "/metrics").body).sum("concierge_workers", ["state": "draining"]) == 1
            }
            #expect(try await Cluster.replies(last).last?.status == .final)
        }

        /// A client's routing id is its own (Docs/PERMISSIONS.md, "Bound names"): while it is connected, another
        /// identity connecting with the same id is never given it (it neither sends nor receives); after it left,
        /// the id stays bound to its identity, so another one is refused `forbidden` and the owner, connecting
        /// again, takes it over at once and reads its result.
        @Test func aClientsRoutingIDIsItsOwnWhileConnectedAndBoundAfter() async throws {
            let (cluster, keys, _) = try await cluster(alice: ["*"])
            func alice() throws -> ConciergeClient {
                try ConciergeClient(
                    configuration: .init(
                        brokerEndpoint: cluster.frontend, routingID: "alice-fixed",
                        heartbeatInterval: .milliseconds(250), curve: keys.clientKeys(keys.alice)))
            }
            let first = try alice()
            try await cluster.waitUntilServing(first)
            let slow = first.send(intent: Self.echo("mine", delayMs: 1500), phase: .handle, requestID: "mine")
            try await first.waitUntilRunning("mine")
            do {
                let bob = try RawCurvePeer(
                    endpoint: cluster.frontend, keys: keys.clientKeys(keys.bob), routingID: "alice-fixed")
                #expect(try bob.handshake()?.kind == .handshakeSucceeded)
                try bob.send(["CIPC01", "STATUS", "mine"])
                try bob.send(["CIPC02", "CANCEL", "mine"])
                try bob.send(["CIPC01", "PING"])
                #expect(try bob.receiveAll(forMilliseconds: 1000).isEmpty)
            }
            // Alice's request was neither read nor cancelled, and its ending reached alice.
            let replies = try await Cluster.replies(slow)
            #expect(replies.last?.status == .final, "\(replies.last?.body_ ?? .null)")
            first.close()

            // Alice left; her id is still bound to her: bob is refused (once libzmq has let her connection go).
            var answer: [String]?
            try await waitUntil("bob gets an answer on alice's routing id") {
                let bob = try RawCurvePeer(
                    endpoint: cluster.frontend, keys: keys.clientKeys(keys.bob), routingID: "alice-fixed")
                try bob.send(["CIPC01", "STATUS", "mine"])
                answer = try bob.receiveAll(forMilliseconds: 300).first
                return answer != nil
            }
            #expect(answer?.contains { $0.contains("forbidden") } == true, "\(answer ?? [])")
            #expect(answer?.contains { $0.contains("in use by another identity") } == true, "\(answer ?? [])")
            #expect(answer?.contains("final") == false)
            // Alice again, with the same id: her result at once.
            let again = try alice()
            let status = try await again.status(of: "mine")
            #expect(status.status == .final, "\(status.body_)")
        }

        /// A worker's name is its own while it is connected: a peer of another identity connecting under it is never
        /// given it and receives nothing (no JOB, no HEARTBEAT); every job goes to the owner.
        @Test func aWorkersNameIsItsOwnWhileConnected() async throws {
            let (cluster, keys, _) = try await cluster(alice: ["*"])
            let alice = try client(cluster.frontend, keys.clientKeys(keys.alice))
            try await cluster.waitUntilServing(alice)
            let thief = try RawCurvePeer(
                endpoint: cluster.backend, keys: keys.clientKeys(keys.narrow), routingID: "pool")
            #expect(try thief.handshake()?.kind == .handshakeSucceeded)
            // It does not even register: holding the name would be enough to get the owner's JOBs and HEARTBEATs.
            for index in 0..<20 {
                let reply = try await alice.request(intent: Self.echo("job \(index)"), phase: .handle)
                #expect(reply.status == .final, "\(reply.body_)")
                #expect(reply.body_["handle"]?["data"]?["worker"]?.stringValue == "pool")
            }
            #expect(try thief.receiveAll(forMilliseconds: 300).isEmpty)
            #expect(!cluster.log("broker").contains("re-registered"))
        }

        /// `--audit-log`: one JSON line per request accepted, refused and ended, with time, identity, key, intent
        /// type, phase, outcome, request id and routing id, and never a body.
        @Test func theAuditLogHasALinePerRequestAcceptedRefusedAndEnded() async throws {
            let cluster = try Cluster()
            let keys = try PermissionKeys(directory: cluster.directory)
            let file = try keys.writePermissions(keys.document(alice: ["Echo"]))
            let audit = cluster.directory.path + "/audit.jsonl"
            try cluster.startBroker(
                keys.brokerArguments + ["--permissions", file, "--audit-log", audit, "--startup-grace-ms", "0"])
            try cluster.startWorker("pool", capacity: 4, keys.peerArguments("workers/pool"))
            try await cluster.waitForBrokerLog("worker registered", "worker=pool")
            let alice = try client(cluster.frontend, keys.clientKeys(keys.alice))
            let bob = try client(cluster.frontend, keys.clientKeys(keys.bob))
            let secret = "secret-body-\(UInt32.random(in: 0...UInt32.max))"
            let served = try await Cluster.replies(
                alice.send(intent: Self.echo(secret), phase: .handle, requestID: "a-served"))
            #expect(served.last?.status == .final)
            let refused = try await Cluster.replies(
                bob.send(intent: Self.echo(secret), phase: .handle, requestID: "b-refused"))
            #expect(refused.last?.errorCode == "forbidden")
            let unserved = try await Cluster.replies(
                bob.send(intent: Self.unknown, phase: .resolve, requestID: "b-unknown"))
            #expect(unserved.last?.errorCode == "unknown-intent")

            var lines: [JSONValue] = []
            try await waitUntil("the audit log has the four lines") {
                let text = (try? String(contentsOfFile: audit, encoding: .utf8)) ?? ""
                lines = text.split(separator: "\n").compactMap { try? JSONValue.parse(Array($0.utf8)) }
                return lines.filter { ["a-served", "b-refused", "b-unknown"].contains($0["request_id"]?.stringValue) }
                    .count == 4
            }
            let text = try String(contentsOfFile: audit, encoding: .utf8)
            #expect(!text.contains(secret), "the audit log must never hold a body")
            func line(_ id: String, _ event: String) -> JSONValue? {
                lines.first { $0["request_id"]?.stringValue == id && $0["event"]?.stringValue == event }
            }
            let accepted = try #require(line("a-served", "accepted"))
            #expect(accepted["identity"]?.stringValue == "alice")
            #expect(accepted["key"]?.stringValue == keys.alice.publicKey.z85)
            #expect(accepted["intent"]?.stringValue == "Echo" && accepted["phase"]?.stringValue == "handle")
            #expect(accepted["outcome"]?.stringValue == "accepted")
            #expect(accepted["time"]?.stringValue?.hasSuffix("Z") == true)
            #expect(line("a-served", "ended")?["outcome"]?.stringValue == "final")
            let forbidden = try #require(line("b-refused", "refused"))
            #expect(forbidden["identity"]?.stringValue == "bob" && forbidden["outcome"]?.stringValue == "forbidden")
            #expect(line("b-unknown", "refused")?["outcome"]?.stringValue == "unknown-intent")
            #expect(line("b-refused", "accepted") == nil && line("b-refused", "ended") == nil)
        }

        /// A permissions file with an error, or one without CURVE, stops the broker at start with a clear error.
        @Test func aBadPermissionsFileStopsTheBrokerAtStart() async throws {
            let cluster = try Cluster()
            let keys = try PermissionKeys(directory: cluster.directory)
            let file = try keys.writePermissions(#"{"version": 1, "identities": {"x": {"keys": ["k"], "sned": {}}}}"#)
            let base = ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--permissions", file]
            let malformed = try runConcierge(base + keys.brokerArguments)
            #expect(malformed.status != 0)
            #expect(malformed.error.contains("permissions-malformed"), "\(malformed.error)")
            let missing = try runConcierge(
                ["broker", "--frontend", cluster.frontend, "--permissions", keys.path("none.json")]
                    + keys.brokerArguments)
            #expect(missing.status != 0)
            #expect(missing.error.contains("permissions-unreadable"), "\(missing.error)")
            try keys.writePermissions(keys.document(alice: ["*"]))
            // A reload aimed at no process: refused with its code, after the file was checked.
            let reload = try runConcierge(["permissions", "reload", "--pid", "2147483646", file])
            #expect(reload.status == 1)
            #expect(reload.error.contains("permissions-reload-failed"), "\(reload.error)")
            let plain = try runConcierge(base)
            #expect(plain.status != 0)
            #expect(plain.error.contains("permissions-need-curve"), "\(plain.error)")
        }
    }
}
