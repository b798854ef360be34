import ConciergeJSON
import IntentWire
import Logging
import Testing
import ZeroMQ

@testable import IntentBroker

/// `CIPW02 STATS` (PROTOCOL.md 5.14) against a real broker in process, on loopback TCP: any backend peer, registered
/// or not, gets the queues and workers; a malformed STATS gets ERROR, never DISCONNECT; a version-1 STATS keeps the
/// rules of version 1. Every wait is bounded.
@Suite struct StatsQueryBrokerTests {
    static let quiet = Logger(label: "test.broker") { _ in SwiftLogNoOpLogHandler() }

    /// Receives one message within `milliseconds`, or nil; heartbeats are skipped.
    static func receive(_ socket: ZMQSocket, within milliseconds: Int = 10_000) throws -> [[UInt8]]? {
        var poller = ZMQPoller()
        poller.add(socket)
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(milliseconds)
        while clock.now < end {
            if try poller.poll(timeoutMilliseconds: 100) > 0, let frames = try socket.receiveMultipart(dontWait: true),
                frames.count < 2 || frames[1] != Array("HEARTBEAT".utf8)
            {
                return frames
            }
        }
        return nil
    }

    static func text(_ frames: [[UInt8]]?) -> [String] { (frames ?? []).map { String(decoding: $0, as: UTF8.self) } }

    @Test func anyBackendPeerGetsQueuesAndWorkersAndMalformedStatsGetsError() async throws {
        let broker = try Broker(
            configuration: BrokerConfiguration(
                frontendEndpoint: "tcp://127.0.0.1:*", backendEndpoint: "tcp://127.0.0.1:*",
                defaultDeadline: .milliseconds(2000), shutdownGracePeriod: .milliseconds(50),
                shutdownLinger: .milliseconds(50), startupGracePeriod: .zero),
            logger: Self.quiet)
        let run = Task { try await broker.run() }
        defer { broker.stop() }
        let context = ZMQContext()
        defer { context.terminate() }
        func dealer(_ endpoint: String, id: String? = nil) throws -> ZMQSocket {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.linger, 0)
            if let id { try socket.setOption(.routingID, bytes: Array(id.utf8)) }
            try socket.connect(endpoint)
            return socket
        }
        let worker = try dealer(broker.backendEndpoint, id: "w-1")
        let query = try dealer(broker.backendEndpoint)
        let client = try dealer(broker.frontendEndpoint)
        defer {
            for socket in [worker, query, client] { socket.close() }
        }
        // A worker of capacity 2 that takes jobs and never answers; then 5 requests: 2 run, 3 queue.
        _ = try worker.send(multipart: frames("CIPW02", "READY", "2", "w-1", "Echo", "Other"), dontWait: false)
        _ = try query.send(multipart: frames("CIPW02", "STATS"), dontWait: false)
        let first = try #require(try Self.receive(query), "no answer to STATS")
        #expect(Self.text(first).prefix(2) == ["CIPW02", "STATS"])
        for index in 0..<5 {
            _ = try client.send(
                multipart: frames(
                    "CIPC01", "REQUEST", "r-\(index)", "Echo", "handle", "", #"{"intent":{"type":"Echo"}}"#),
                dontWait: false)
        }
        for _ in 0..<2 {
            let job = Self.text(try Self.receive(worker))
            #expect(job.prefix(2) == ["CIPW02", "JOB"], "\(job)")
        }
        // Ask until the broker has queued the other 3 (the requests arrive on another socket).
        var stats: BrokerStats?
        let clock = ContinuousClock()
        let end = clock.now + .seconds(10)
        while clock.now < end {
            _ = try query.send(multipart: frames("CIPW02", "STATS"), dontWait: false)
            let answer = try #require(try Self.receive(query), "no answer to STATS")
            try #require(
                answer.count == 3 && Self.text(answer).prefix(2) == ["CIPW02", "STATS"], "\(Self.text(answer))")
            let body = try BrokerStats(parsing: answer[2])
            if body.queued == 3 {
                stats = body
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let snapshot = try #require(stats, "the broker never said 3 requests queued")
        #expect(snapshot.state == "active")
        #expect(snapshot.defaultDeadlineMilliseconds == 2000)
        #expect(snapshot.requestsInFlight == 5)
        #expect(
            snapshot.workers == [.init(name: "w-1", capacity: 2, jobs: 2, draining: false, intents: ["Echo", "Other"])])
        let echo = try #require(snapshot.intentTypes.first { $0.name == "Echo" })
        #expect(echo.queued == 3 && echo.workers == 1 && echo.capacity == 2 && echo.capacityUsed == 2)
        #expect(echo.capacityFree == 0)

        // Malformed: ERROR malformed, and the peer is not sent away (no DISCONNECT).
        _ = try query.send(multipart: frames("CIPW02", "STATS", "extra"), dontWait: false)
        let error = Self.text(try Self.receive(query))
        #expect(error.prefix(3) == ["CIPW02", "ERROR", "malformed"], "\(error)")
        // Version 1 has no STATS: an unregistered peer is told to register (DISCONNECT), as for any command.
        _ = try query.send(multipart: frames("CIPW01", "STATS"), dontWait: false)
        #expect(Self.text(try Self.receive(query)) == ["CIPW01", "DISCONNECT"])
        // The worker's STATS does not disturb its registration: it still holds its jobs.
        _ = try worker.send(multipart: frames("CIPW02", "STATS"), dontWait: false)
        let own = try #require(try Self.receive(worker))
        #expect(Self.text(own).prefix(2) == ["CIPW02", "STATS"])
        #expect(try BrokerStats(parsing: own[2]).workers.first?.jobs == 2)
        broker.stop()
        _ = try await run.value
    }
}

private func frames(_ strings: String...) -> [[UInt8]] { strings.map { Array($0.utf8) } }
