import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// Bad input on the wire: every malformed message gets an error reply with a stable code, and the broker keeps
    /// serving everyone else.
    @Suite(.serialized) struct BrokerRobustnessTests {
        /// A raw DEALER speaking frames by hand, as a client in another language would.
        final class RawPeer {
            let context = ZMQContext()
            let socket: ZMQSocket
            init(endpoint: String) throws {
                socket = try ZMQSocket(context: context, type: .dealer)
                try socket.setOption(.receiveTimeout, 5000)
                try socket.connect(endpoint)
            }
            func exchange(_ frames: [String]) throws -> [String] {
                try socket.send(multipart: frames.map { Array($0.utf8) }, dontWait: false)
                guard let reply = try socket.receiveMultipart(dontWait: false) else { return [] }
                return reply.map { String(decoding: $0, as: UTF8.self) }
            }
            deinit { socket.close() }
        }

        func errorCode(_ frames: [String]) -> String? {
            guard frames.count == 6, frames[3] == "error" else { return nil }
            return (try? JSONValue.parse(frames[5]))?["code"]?.stringValue
        }

        @Test func anEndpointInUseFailsWithBindFailedInsteadOfHanging() async throws {
            let cluster = try Cluster()
            // Hold a loopback TCP port (ipc:// binds take the path over instead of failing, so TCP shows the clash).
            let context = ZMQContext()
            let holder = try ZMQSocket(context: context, type: .router)
            try holder.bind("tcp://127.0.0.1:*")
            defer {
                holder.close()
                context.terminate()
            }
            let taken = holder.lastEndpoint
            // A broker whose frontend, then whose backend, is taken must exit at once with the stable code, not hang
            // (terminating the context before closing the sockets made zmq_ctx_term wait forever).
            for (name, arguments) in [
                ("frontend-clash", ["--frontend", taken, "--backend", cluster.backend]),
                ("backend-clash", ["--frontend", cluster.frontend, "--backend", taken]),
            ] {
                try cluster.start(name, ["broker"] + arguments)
                let status = await cluster.waitForExit(name, seconds: 10)
                #expect(status == 1, "\(name) still running or wrong status: \(String(describing: status))")
                #expect(cluster.log(name).contains("bind-failed"))
            }
        }

        @Test func anIPCPathInUseIsRefusedAndAStaleOneIsTakenOver() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // libzmq would replace the live socket file: a second broker on the same paths must refuse instead.
            try cluster.start(
                "second", ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend + "-2"])
            #expect(await cluster.waitForExit("second", seconds: 10) == 1)
            #expect(cluster.log("second").contains("bind-failed"))
            #expect(cluster.log("second").contains("in use by another process"))
            let reply = try await client.request(
                intent: ["type": "Echo", "parameters": ["text": "still mine"]], phase: .handle)
            #expect(reply.body_["handle"]?["data"]?["text"] == "still mine")
            // A broker killed outright leaves its socket files behind; nobody listens, so the next broker takes them.
            cluster.signal("broker", SIGKILL)
            _ = await cluster.waitForExit("broker")
            try cluster.start("third", ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend])
            try await cluster.waitUntilServing(client)
        }

        @Test func malformedFramesAndUnknownCommandsGetErrorRepliesWhileTheBrokerKeepsServing() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--startup-grace-ms", "0"])  // an unannounced type is refused at once
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let raw = try RawPeer(endpoint: cluster.frontend)
            let body = #"{"intent":{"type":"Echo","parameters":{"text":"x"}}}"#

            let cases: [([String], String)] = [
                (["CIPC01"], "malformed"),
                (["CIPC09", "REQUEST", "r1", "Echo", "handle", "", body], "unsupported-version"),
                (["MDPC01", "REQUEST"], "unsupported-version"),
                (["CIPC01", "FROB", "r2"], "unknown-command"),
                (["CIPC01", "REQUEST", "r3", "Echo", "handle", ""], "malformed"),
                (["CIPC01", "REQUEST", "", "Echo", "handle", "", body], "bad-request-id"),
                (["CIPC01", "REQUEST", "r4", "Echo", "dance", "", body], "bad-phase"),
                (["CIPC01", "REQUEST", "r5", "Echo", "handle", "soon", body], "bad-deadline"),
                (["CIPC01", "REQUEST", "r6", "Echo", "handle", "5", body], "bad-deadline"),
                (["CIPC01", "REQUEST", "r7", "Echo", "handle", "", ""], "malformed"),
                (["CIPC01", "REQUEST", "r8", "NoSuchIntent", "handle", "", body], "unknown-intent"),
                (["CIPC01", "STATUS", "never-sent"], "unknown-request"),
                (["CIPC01", "REQUEST", "r9", "Echo", "handle", "", "{not json"], "bad-body"),
                (
                    [
                        "CIPC01", "REQUEST", "r10", "Echo", "handle", "",
                        #"{"intent":{"type":"Echo","parameters":{"text":5}}}"#,
                    ], "invalid-type"
                ),
            ]
            for (frames, expected) in cases {
                let reply = try raw.exchange(frames)
                #expect(reply.first == "CIPC01", "reply to \(frames)")
                #expect(errorCode(reply) == expected, "reply to \(frames): \(reply)")
            }
        }

        @Test func oversizedBodiesGetTooLargeAndDuplicatesAreRefused() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--max-body", "1000"])
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let raw = try RawPeer(endpoint: cluster.frontend)
            let big =
                #"{"intent":{"type":"Echo","parameters":{"text":""# + String(repeating: "a", count: 2000) + #""}}}"#
            #expect(
                errorCode(try raw.exchange(["CIPC01", "REQUEST", "big", "Echo", "handle", "", big])) == "too-large")

            let slow = #"{"intent":{"type":"Echo","parameters":{"delayMs":800}}}"#
            try raw.socket.send(
                multipart: ["CIPC01", "REQUEST", "dup", "Echo", "handle", "", slow].map { Array($0.utf8) })
            let second = try raw.exchange(["CIPC01", "REQUEST", "dup", "Echo", "handle", "", slow])
            #expect(errorCode(second) == "duplicate-request")
            let first = try raw.socket.receiveMultipart(dontWait: false)?.map { String(decoding: $0, as: UTF8.self) }
            #expect(first?[3] == "final")

            // PING answers PONG, and a normal request still works afterwards.
            #expect(try raw.exchange(["CIPC01", "PING"]) == ["CIPC01", "PONG"])
            let reply = try await client.request(intent: ["type": "Echo", "parameters": ["text": "still here"]])
            #expect(reply.status == .final)
            #expect(reply.body_["handle"]?["data"]?["text"] == "still here")
        }

        @Test func aFrameAboveTheTransportLimitDropsItsConnectionAndTheBrokerGoesOn() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--max-body", "1000", "--max-message", "4000"])
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let raw = try RawPeer(endpoint: cluster.frontend)
            try raw.socket.setOption(.receiveTimeout, 1000)
            let body =
                #"{"intent":{"type":"Echo","parameters":{"text":""# + String(repeating: "a", count: 3000) + #""}}}"#
            // Above the body limit but within the transport limit: too-large.
            #expect(
                errorCode(try raw.exchange(["CIPC01", "REQUEST", "big", "Echo", "handle", "", body])) == "too-large")
            // Above the transport limit: libzmq drops the connection, and the message gets no answer.
            let huge = body + String(repeating: " ", count: 2000)
            #expect(try raw.exchange(["CIPC01", "REQUEST", "huge", "Echo", "handle", "", huge]) == [])
            // The peer reconnects by itself and is served again; so is everyone else.
            try raw.socket.setOption(.receiveTimeout, 5000)
            #expect(try raw.exchange(["CIPC01", "PING"]) == ["CIPC01", "PONG"])
            let reply = try await client.request(intent: ["type": "Echo", "parameters": ["text": "still here"]])
            #expect(reply.status == .final)
        }

        @Test func malformedWorkerMessagesGetErrorsAndRogueResultsAreDropped() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let rogue = try RawPeer(endpoint: cluster.backend)
            var reply = try rogue.exchange(["CIPW01", "READY", "many", "rogue", "Echo"])
            #expect(reply.count == 4 && reply[1] == "ERROR" && reply[2] == "malformed", "\(reply)")
            reply = try rogue.exchange(["CIPW09", "READY", "1", "rogue", "Echo"])
            #expect(reply.count == 4 && reply[2] == "unsupported-version", "\(reply)")
            // A RESULT from a peer that never registered: the broker tells it to register, and nothing breaks.
            reply = try rogue.exchange(["CIPW01", "RESULT", "12345678", "stop", "{}"])
            #expect(reply == ["CIPW01", "DISCONNECT"])
            let ok = try await client.request(intent: ["type": "Echo", "parameters": ["text": "fine"]])
            #expect(ok.status == .final)
        }
    }
}
