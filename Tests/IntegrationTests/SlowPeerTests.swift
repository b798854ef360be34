import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// Overload and slow peers with real processes: bounded queues answer `busy` at once, and a client that stops
    /// reading its replies blocks neither the broker nor anyone else; what it missed stays available to STATUS.
    @Suite(.serialized) struct SlowPeerTests {
        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        @Test func aClientThatStopsReadingBlocksNobodyAndWhatItMissedWaitsForStatus() async throws {
            let cluster = try Cluster()
            // At most 20 replies held in libzmq for a connection that does not read. The slow client's 400 replies of
            // ~130 KiB (52 MiB) must all stay stored for STATUS: a results budget above the default's 32 MiB. The 400
            // jobs queue on one slot on purpose: a standing queue, which the default limit (Docs/OVERLOAD.md) would
            // answer `busy` to the other client's requests (seen in a hogged CI run); that is not this test's feature.
            try cluster.startBroker([
                "--client-queue", "20", "--results-memory", "\(128 << 20)", "--standing-queue-wait-ms", "0",
            ])
            // Capacity 1: jobs run one after the other, so a job that starts after all of the slow client's jobs
            // started also starts after they all ended (see the wait below).
            try cluster.startWorker("w1", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // Every Echo job runs in a fresh handler whose `instance` counts the handlers made so far: it tells how
            // many jobs the worker started before this one.
            func instance(of text: String) async throws -> Int {
                let reply = try await client.request(
                    intent: echo(["text": .string(text)]), phase: .handle, deadline: .seconds(60))
                #expect(reply.status == .final, "\(reply.body_)")
                #expect(reply.body_["handle"]?["data"]?["text"] == .string(text))
                return try #require(reply.body_["handle"]?["data"]?["instance"]?.intValue)
            }
            let before = try await instance(of: "before")

            // The slow client: a raw DEALER that sends 400 requests with 32 KiB texts (replies of ~130 KiB: far more
            // than libzmq's queue and the kernel's socket buffers hold) and reads nothing for now.
            let context = ZMQContext()
            let slow = try ZMQSocket(context: context, type: .dealer)
            defer {
                slow.close()
                context.terminate()
            }
            try slow.setOption(.receiveHighWaterMark, 1)
            try slow.setOption(ZMQSocketOption(rawValue: 12), 4096)  // ZMQ_RCVBUF: a small kernel receive buffer
            try slow.connect(cluster.frontend)
            let text = String(repeating: "s", count: 32 * 1024)
            let body = Array(#"{"intent":{"type":"Echo","parameters":{"text":"\#(text)"}}}"#.utf8)
            let count = 400
            for index in 0..<count {
                let frames: [[UInt8]] = [
                    Array("CIPC01".utf8), Array("REQUEST".utf8), Array("slow-\(index)".utf8), Array("Echo".utf8),
                    // A long deadline (not the default 3 s): the queue of 400 must not get them shed (busy) when
                    // the machine is slow; this test is about replies that are not read, not about deadlines.
                    Array("handle".utf8), Array("60000".utf8), body,
                ]
                try slow.send(multipart: frames, dontWait: false)
            }

            // Everyone else is served while the slow client's replies pile up.
            var ownJobs = 0
            for index in 0..<30 {
                // A long deadline: on a loaded machine the slow client's queue would otherwise get these shed (busy).
                _ = try await instance(of: "fast \(index)")
                ownJobs += 1
            }
            // Wait until the worker has run all of the slow client's jobs: a probe that starts after 400 jobs other
            // than ours (capacity 1: after they ended; their RESULTs, and so the replies the broker then sent or
            // could not send, came before the probe's).
            try await waitUntil("the worker has run the slow client's \(count) jobs") {
                ownJobs += 1
                return try await instance(of: "probe") - before - ownJobs >= count
            }
            // Read what reached the slow client: whatever is queued (until a quiet second), then up to the answer to
            // a PING, which comes after every reply still queued (one connection, in order).
            var received = Set<String>()
            func take(_ frames: [[UInt8]]) {
                #expect(frames.count == 6)
                #expect(String(decoding: frames[1], as: UTF8.self) == "REPLY")
                #expect(String(decoding: frames[3], as: UTF8.self) == "final")
                received.insert(String(decoding: frames[2], as: UTF8.self))
            }
            try slow.setOption(.receiveTimeout, 1000)
            while let frames = try slow.receiveMultipart(dontWait: false) { take(frames) }
            try slow.setOption(.receiveTimeout, 10000)
            try slow.send(multipart: [Array("CIPC01".utf8), Array("PING".utf8)], dontWait: false)
            while true {
                let frames = try #require(try slow.receiveMultipart(dontWait: false), "no PONG")
                if frames.count == 2 && String(decoding: frames[1], as: UTF8.self) == "PONG" { break }
                take(frames)
            }
            let missed = (0..<count).map { "slow-\($0)" }.filter { !received.contains($0) }
            #expect(!missed.isEmpty, "every reply reached the client that did not read: the queue limit did nothing")
            #expect(received.count >= 1)

            // What it missed is kept: STATUS answers the final reply, body and all.
            for id in missed.prefix(5) {
                try slow.send(multipart: [Array("CIPC01".utf8), Array("STATUS".utf8), Array(id.utf8)], dontWait: false)
                let answer = try #require(try slow.receiveMultipart(dontWait: false))
                #expect(answer.count == 6)
                #expect(String(decoding: answer[1], as: UTF8.self) == "STATUS")
                #expect(String(decoding: answer[2], as: UTF8.self) == id)
                #expect(String(decoding: answer[3], as: UTF8.self) == "final")
                let json = try JSONValue.parse(answer[5])
                #expect(json["handle"]?["data"]?["text"]?.stringValue?.count == text.count)
            }
            // The broker counted the replies it could not deliver.
            cluster.signal("broker", SIGTERM)
            #expect(await cluster.waitForExit("broker") == 0)
            #expect(cluster.log("broker").contains("undeliveredReplies: \(missed.count)"), "\(cluster.log("broker"))")
        }

        @Test func theQueueOfOneIntentTypeIsBoundedAndAnswersBusyAtOnce() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--max-queued-per-type", "3"])
            try cluster.startWorker("single", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // One runs, three wait, the last two are refused at once (the type's queue is full; the broker's is not).
            let streams = (0..<6).map {
                client.send(
                    intent: echo(["text": .string("q\($0)"), "delayMs": 200]), phase: .handle, deadline: .seconds(20))
            }
            var busy: [Int] = []
            var served: [Int] = []
            for (index, stream) in streams.enumerated() {
                let last = try #require(try await Cluster.replies(stream).last)
                if last.status == .final {
                    served.append(index)
                } else {
                    #expect(last.errorCode == "busy")
                    #expect(
                        last.body_["message"]?.stringValue?.contains(#"queue of intent type "Echo" is full"#) == true)
                    busy.append(index)
                }
            }
            #expect(served == [0, 1, 2, 3])
            #expect(busy == [4, 5])
        }

        @Test func jobsBookedForAWorkerThatVanishedGoElsewhereEvenHandleJobs() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("real", capacity: 4)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // A raw worker registers for Echo with room for many jobs, hears its first HEARTBEAT (registered), and
            // vanishes without a word: the broker's sends to it fail (EHOSTUNREACH) until its heartbeats expire.
            let context = ZMQContext()
            let raw = try ZMQSocket(context: context, type: .dealer)
            try raw.setOption(.routingID, string: "vanishing")
            try raw.setOption(.receiveTimeout, 5000)
            try raw.connect(cluster.backend)
            try raw.send(
                multipart: ["CIPW01", "READY", "100", "vanishing", "Echo"].map { Array($0.utf8) }, dontWait: false)
            let heartbeat = try #require(try raw.receiveMultipart(dontWait: false))
            #expect(heartbeat.map { String(decoding: $0, as: UTF8.self) } == ["CIPW01", "HEARTBEAT"])
            let connections = try unixConnections(to: cluster.backend)
            raw.close()
            context.terminate()
            // Vanished for the broker too: its end of the connection is closed (libzmq closes it as it tears down
            // the peer's pipe), so its next send to the raw worker fails instead of queueing a JOB nobody reads.
            try await waitUntil("the broker closes the raw worker's connection") {
                try unixConnections(to: cluster.backend) < connections
            }
            // Handle jobs that were booked for it but never sent are not lost and not failed as worker-lost: they were
            // never run, so they go to the real worker.
            let streams = (0..<12).map {
                client.send(intent: echo(["text": .string("h\($0)")]), phase: .handle, deadline: .seconds(20))
            }
            for (index, stream) in streams.enumerated() {
                let last = try #require(try await Cluster.replies(stream).last)
                #expect(last.status == .final, "\(index): \(last.errorCode ?? "")")
                #expect(last.body_["handle"]?["data"]?["text"] == .string("h\(index)"))
            }
            #expect(cluster.log("broker").contains("worker unreachable"))
        }
    }
}

/// How many sockets of this machine (network namespace) have the `ipc://` endpoint as their address: the listening
/// socket and the broker's end of every accepted connection (Linux lists both under the listener's path in
/// /proc/net/unix).
func unixConnections(to endpoint: String) throws -> Int {
    let path = String(endpoint.dropFirst("ipc://".count))
    let table = try String(contentsOfFile: "/proc/net/unix", encoding: .utf8)
    return table.split(separator: "\n").filter { $0.split(separator: " ").last.map(String.init) == path }.count
}
