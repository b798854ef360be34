import ConciergeJSON
import ConciergeTestKit
import Foundation
import Testing
import ZeroMQ

extension EndToEnd {
    /// Bad input from the broker: a real worker facing a scripted broker answers every JOB it can (RESULT `error`,
    /// `malformed`), ignores what it cannot, and still drains and leaves at once.
    @Suite(.serialized) struct WorkerRobustnessTests {
        /// A ROUTER bound where the worker connects, speaking frames by hand.
        final class ScriptedBroker {
            let context = ZMQContext()
            let socket: ZMQSocket
            var worker: [UInt8] = []

            init(endpoint: String) throws {
                socket = try ZMQSocket(context: context, type: .router)
                try socket.setOption(.receiveTimeout, 5000)
                try socket.bind(endpoint)
            }

            deinit {
                socket.close()
                context.terminate()
            }

            /// The next message from the worker other than HEARTBEAT (routing id removed), or nil after the timeout.
            func receive() throws -> [String]? {
                while let message = try socket.receiveMultipart(dontWait: false) {
                    worker = message[0]
                    let frames = message.dropFirst().map { String(decoding: $0, as: UTF8.self) }
                    if frames.count == 2 && frames[1] == "HEARTBEAT" { continue }
                    return frames
                }
                return nil
            }

            func send(_ frames: [[UInt8]]) throws {
                try socket.send(multipart: [worker] + frames, dontWait: false)
            }
        }

        static let body = Array(#"{"intent":{"type":"Echo","parameters":{"text":"x"}}}"#.utf8)

        static func job(_ id: UInt8, _ change: [Int: String] = [:], count: Int = 7) -> [[UInt8]] {
            var frames: [[UInt8]] = [
                Array("CIPW01".utf8), Array("JOB".utf8), [id, 0, 0, 0, 0, 0, 0, 0], Array("Echo".utf8),
                Array("handle".utf8), Array("500".utf8), body,
            ]
            for (index, frame) in change { frames[index] = Array(frame.utf8) }
            return Array(frames.prefix(count))
        }

        func errorCode(_ result: [String]?) -> String? {
            guard let result, result.count == 5, result[3] == "error" else { return nil }
            return (try? JSONValue.parse(result[4]))?["code"]?.stringValue
        }

        @Test func malformedJobsAreAnsweredOrIgnoredAndTheWorkerStillDrainsAtOnce() async throws {
            let cluster = try Cluster()
            let broker = try ScriptedBroker(endpoint: cluster.backend)
            // A long heartbeat: the scripted broker sends none, and the worker must not give up on it meanwhile.
            try cluster.start(
                "w1",
                ["worker", "--broker", cluster.backend, "--name", "w1", "--capacity", "4", "--heartbeat-ms", "5000"]
            )
            let ready = try broker.receive()
            #expect(ready?.prefix(4) == ["CIPW06", "READY", "4", "w1"])

            // Answered: a usable job id, whatever else is wrong.
            let answered: [[[UInt8]]] = [
                Self.job(1, [4: "lifecycle"]),  // W4 (this one unbalanced the running count before)
                Self.job(2, count: 6),  // W3
                Self.job(3, [3: ""]),  // W5
                Self.job(4, [5: "soon"]),  // W6
                Self.job(5, [6: ""]),  // W7
            ]
            for (index, message) in answered.enumerated() {
                try broker.send(message)
                let result = try broker.receive()
                #expect(result?[1] == "RESULT", "\(index): \(String(describing: result))")
                #expect(result?[2] == String(decoding: message[2], as: UTF8.self))
                #expect(errorCode(result) == "malformed", "\(index): \(String(describing: result))")
            }

            // Ignored: no usable job id, another signature, an unknown command. A good job afterwards is answered, and
            // its RESULT is the next message.
            try broker.send([Array("CIPW01".utf8), Array("JOB".utf8), [9, 9, 9]] + Array(Self.job(9).dropFirst(3)))
            try broker.send([Array("CIPW09".utf8), Array("HEARTBEAT".utf8)])
            try broker.send([Array("CIPW01".utf8), Array("FROB".utf8)])
            try broker.send(Self.job(6))
            let good = try broker.receive()
            #expect(good?[1] == "RESULT" && good?[2] == String(decoding: Self.job(6)[2], as: UTF8.self))
            #expect(good?[3] == "stop", "\(String(describing: good))")

            // Drain: with nothing running, the worker leaves as soon as its DRAIN is acknowledged.
            cluster.signal("w1", SIGTERM)
            #expect(try broker.receive() == ["CIPW06", "DRAIN"])
            try broker.send([Array("CIPW01".utf8), Array("DRAIN".utf8)])
            #expect(try broker.receive() == ["CIPW06", "DISCONNECT"])
            #expect(await cluster.waitForExit("w1", seconds: 5) == 0)
        }

        /// The slim `concierge-worker` has its own entry point (its main thread parks in `pause()` and the command
        /// runs in a detached task, Docs/PROFILES.md "The idle worker"): it registers, answers a job, and on SIGTERM
        /// drains, disconnects and exits 0, like `concierge worker`.
        @Test func theSlimWorkerServesThenDrainsAndExitsZero() async throws {
            let cluster = try Cluster()
            let broker = try ScriptedBroker(endpoint: cluster.backend)
            try cluster.start(
                "w1", ["--broker", cluster.backend, "--name", "w1", "--capacity", "4", "--heartbeat-ms", "5000"],
                executable: Cluster.slimWorkerExecutable
            )
            let ready = try broker.receive()
            #expect(ready?.prefix(4) == ["CIPW06", "READY", "4", "w1"], "\(cluster.log("w1"))")

            try broker.send(Self.job(1))
            let result = try broker.receive()
            #expect(result?[1] == "RESULT" && result?[2] == String(decoding: Self.job(1)[2], as: UTF8.self))
            #expect(result?[3] == "stop", "\(String(describing: result))")
            #expect(result?[4].contains(#""text":"x""#) == true, "\(String(describing: result))")

            cluster.signal("w1", SIGTERM)
            #expect(try broker.receive() == ["CIPW06", "DRAIN"])
            try broker.send([Array("CIPW01".utf8), Array("DRAIN".utf8)])
            #expect(try broker.receive() == ["CIPW06", "DISCONNECT"])
            #expect(await cluster.waitForExit("w1", seconds: 5) == 0)
        }
    }
}
