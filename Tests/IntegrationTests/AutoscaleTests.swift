import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing
import ZeroMQ

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension EndToEnd {
    /// `concierge pool --autoscale MIN:MAX` with a real broker, real workers and real requests:
    /// the pool asks the broker for STATS, grows on a burst, shrinks back when idle, and stops idle workers only.
    /// Every wait is bounded and waits on observable state (the pool's control `status`, its log, replies).
    @Suite(.serialized) struct AutoscaleTests {
        /// The pool's control `status` (PoolControl), as JSON.
        static func status(_ cluster: Cluster) throws -> JSONValue {
            let context = ZMQContext()
            defer { context.terminate() }
            let socket = try ZMQSocket(context: context, type: .req)
            defer { socket.close() }
            try socket.setOption(.linger, 0)
            try socket.setOption(.receiveTimeout, 5000)
            try socket.connect(cluster.control)
            _ = try socket.send("status", dontWait: false)
            guard let reply = try socket.receiveMultipart() else { throw WaitTimedOut(description: "no status") }
            return try JSONValue.parse(reply[0])
        }

        static func size(_ cluster: Cluster) -> Int { (try? status(cluster))?["size"]?.intValue ?? -1 }

        /// The names of the workers the autoscaler stopped, from the pool's log lines `autoscale: shrink`.
        static func stoppedWorkers(_ log: String) -> [String] {
            log.split(separator: "\n").filter { $0.contains("autoscale: shrink") }.compactMap { line in
                guard let range = line.range(of: "stopping=") else { return nil }
                return String(line[range.upperBound...].prefix { !$0.isWhitespace && $0 != "," })
            }
        }

        /// GET `path` from the pool's HTTP server: the status code and the body.
        static func get(_ port: Int, _ path: String) async throws -> (Int, String) {
            let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
            let (data, response) = try await URLSession.shared.data(from: url)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        @Test func aBurstGrowsThePoolItsEndShrinksItBackAndEveryRequestEndsOnce() async throws {
            let cluster = try Cluster()
            // The burst's standing queue is what grows the pool: shedding it (busy) would defeat the test.
            try cluster.startBroker(["--standing-queue-wait-ms", "0"])
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", cluster.backend, "--workers", "1", "--control", cluster.control,
                    "--heartbeat-ms", "250", "--capacity", "2", "--autoscale", "1:4", "--autoscale-idle-seconds", "3",
                    "--http", "127.0.0.1:0",
                ])
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            try await waitUntil("the pool asks its broker\n\(cluster.log("pool"))") {
                (try? Self.status(cluster))?["broker"]?["answered"] == true
            }
            #expect(Self.size(cluster) == 1)

            // A bounded burst: 24 requests of 1.5 s each, all at once; one worker holds 2 at a time (18 s alone).
            let count = 24
            let largest = Counter()
            let watching = Task {
                while !Task.isCancelled {
                    let size = Self.size(cluster)
                    while largest.value < size { largest.increment() }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            let started = ContinuousClock.now
            let endings = try await withThrowingTaskGroup(of: [Reply].self) { group in
                for index in 0..<count {
                    group.addTask {
                        try await Cluster.replies(
                            client.send(
                                intent: echo(["text": .string("burst-\(index)"), "delayMs": 1500]), phase: .handle,
                                // Long enough to wait in the queue rather than be shed as `busy` (6.3).
                                deadline: .seconds(30)))
                    }
                }
                var all: [[Reply]] = []
                for try await replies in group { all.append(replies) }
                return all
            }
            let burstEnded = ContinuousClock.now
            #expect(endings.count == count)
            for replies in endings {
                let final = replies.filter { $0.status != .progress }
                #expect(final.count == 1, "one ending per request: \(replies.map(\.status))")
                #expect(final.first?.status == .final, "\(final.first?.body_ ?? .null)")
            }
            #expect(largest.value >= 2, "the pool never grew during the burst\n\(cluster.log("pool"))")
            #expect(cluster.log("pool").contains("autoscale: grow"))

            // The pool's metrics and health while it runs (port 0: the log says which one it got).
            let port = try #require(
                cluster.log("pool").split(separator: "\n").first { $0.contains("http ready") }.flatMap { line in
                    line.range(of: "127.0.0.1:").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
                })
            let (metricsCode, metrics) = try await Self.get(port, "/metrics")
            #expect(metricsCode == 200)
            for name in [
                #"concierge_pool_workers{state="wanted"}"#, #"concierge_pool_workers{state="running"}"#,
                "concierge_pool_restarts_total", "concierge_pool_jobs_in_progress", "concierge_pool_autoscale_target",
            ] {
                #expect(metrics.contains(name), "\(name) missing from\n\(metrics)")
            }
            #expect(try await Self.get(port, "/livez").0 == 200)
            #expect(try await Self.get(port, "/readyz").0 == 200)

            // Back to 1 within a minute of the burst's end.
            try await waitUntil("the pool shrinks back to 1\n\(cluster.log("pool"))", timeout: .seconds(60)) {
                Self.size(cluster) == 1
            }
            watching.cancel()
            let shrunk = ContinuousClock.now
            let log = cluster.log("pool")
            #expect(!Self.stoppedWorkers(log).isEmpty)
            #expect(!log.contains("worker exited; restarting"), "a worker crashed\n\(log)")
            print(
                "autoscale: burst of \(count) x 1.5 s took \(burstEnded - started) with at most \(largest.value) workers;"
                    + " back to 1 worker \(shrunk - burstEnded) after it ended")
            cluster.stopAll()
        }

        @Test func scaleDownStopsOnlyIdleWorkersAndBusyOnesFinishTheirJobs() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--standing-queue-wait-ms", "0"])
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", cluster.backend, "--workers", "3", "--control", cluster.control,
                    "--heartbeat-ms", "250", "--capacity", "2", "--autoscale", "1:3", "--autoscale-idle-seconds", "4",
                ])
            let client = try cluster.client()
            try await waitUntil("3 workers register\n\(cluster.log("broker"))") {
                cluster.log("broker").components(separatedBy: "worker registered").count > 3
            }
            // Two long jobs: each holds a worker well past the idle time; the third worker has nothing.
            let jobs = (0..<2).map { index in
                let id = "long-\(index)"
                let stream = client.send(intent: echo(["delayMs": 15_000]), phase: .handle, requestID: id)
                return (id, Task { try await Cluster.replies(stream) })
            }
            var busy: Set<String> = []
            for (id, _) in jobs {
                let running = try await client.waitForStatus(of: id) {
                    $0.status == .progress && $0.body_["state"] == "running"
                }
                busy.insert(try #require(running.body_["worker"]?.stringValue))
            }
            // The autoscaler stops the idle worker, then finds no idle one left (or, if both jobs share a worker,
            // reaches the minimum): the state to judge, while the long jobs still run.
            try await waitUntil("the pool shrinks and then holds\n\(cluster.log("pool"))") {
                let log = cluster.log("pool")
                return !Self.stoppedWorkers(log).isEmpty
                    && (log.contains("no worker is idle") || Self.size(cluster) == 1)
            }
            let during = cluster.log("pool")
            let stopped = Self.stoppedWorkers(during)
            #expect(Set(stopped).isDisjoint(with: busy), "stopped \(stopped) while \(busy) held jobs\n\(during)")
            let slots = try Self.status(cluster)["workers"]?.objectValue?.keys.map { "pool-\($0)" } ?? []
            #expect(busy.isSubset(of: Set(slots)), "the busy workers \(busy) left the pool: \(slots)")
            for (id, task) in jobs {
                let replies = try await task.value
                let final = replies.filter { $0.status != .progress }
                #expect(final.count == 1 && final.first?.status == .final, "\(id): \(replies.map(\.body_))")
                #expect(busy.contains(final.first?.body_["handle"]?["data"]?["worker"]?.stringValue ?? ""))
            }
            cluster.stopAll()
        }

        /// With CURVE the pool asks with its workers' key (the backend admits only worker keys); a peer without one
        /// gets no answer at all.
        @Test func overCurveThePoolAsksWithItsWorkersKey() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            try cluster.startBroker(keys.brokerArguments)
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", cluster.backend, "--workers", "1", "--control", cluster.control,
                    "--heartbeat-ms", "250", "--autoscale", "1:2",
                ] + keys.peerArguments("workers/pool"))
            try await waitUntil("the pool's STATS are answered over CURVE\n\(cluster.log("pool"))") {
                let broker = (try? Self.status(cluster))?["broker"]
                return broker?["answered"] == true
                    && broker?["autoscale"]?["last_decision"]?.stringValue?.isEmpty == false
            }
            // A plain peer's STATS never reaches the broker.
            let context = ZMQContext()
            defer { context.terminate() }
            let plain = try ZMQSocket(context: context, type: .dealer)
            defer { plain.close() }
            try plain.setOption(.linger, 0)
            try plain.connect(cluster.backend)
            _ = try plain.send(multipart: [Array("CIPW02".utf8), Array("STATS".utf8)])
            var poller = ZMQPoller()
            poller.add(plain)
            #expect(try poller.poll(timeoutMilliseconds: 1500) == 0, "a peer without a worker key was answered")
            cluster.stopAll()
        }

        /// `concierge up --autoscale --http`: one server for the broker's metrics and the pool's, checks of both.
        @Test func upServesTheBrokersAndThePoolsMetricsOnOneServer() async throws {
            let cluster = try Cluster()
            try cluster.start(
                "up",
                [
                    "up", "--frontend", cluster.frontend, "--backend", cluster.backend, "--control", cluster.control,
                    "--workers", "1", "--autoscale", "1:2", "--http", "127.0.0.1:0",
                ])
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let port = try #require(
                cluster.log("up").split(separator: "\n").first { $0.contains("http ready") }.flatMap { line in
                    line.range(of: "127.0.0.1:").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
                }, "\(cluster.log("up"))")
            try await waitUntil("the pool's STATS are answered") {
                (try? Self.status(cluster))?["broker"]?["answered"] == true
            }
            let (code, metrics) = try await Self.get(port, "/metrics")
            #expect(code == 200)
            for name in [
                #"concierge_pool_workers{state="wanted"}"#, "concierge_pool_autoscale_target",
                "concierge_requests_in_flight", #"concierge_workers{state="ready"}"#,
            ] {
                #expect(metrics.contains(name), "\(name) missing from\n\(metrics)")
            }
            let (readyCode, ready) = try await Self.get(port, "/readyz")
            #expect(readyCode == 200 && ready.contains("broker:") && ready.contains("pool:"), "\(ready)")
            cluster.signal("up", SIGTERM)
            #expect(await cluster.waitForExit("up") == 0)
        }
    }
}
