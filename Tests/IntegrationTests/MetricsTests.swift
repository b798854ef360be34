import ConciergeJSON
import ConciergeTestKit
import ConciergeTop
import Foundation
import IntentClient
import IntentWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    /// `--http`: the broker's /metrics, /livez and /readyz (`Docs/OPERATIONS.md`, "Metrics and health").
    @Suite(.serialized) struct MetricsTests {
        /// After a load with finals, handler errors, progress replies and busy refusals, the broker's counters equal
        /// what the load client saw, outcome by outcome.
        @Test func countersEqualWhatTheLoadClientSaw() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0", "--max-queued-per-type", "4"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("w1", capacity: 4)
            try cluster.startWorker("w2", capacity: 4)
            try await cluster.waitForBrokerLog("worker registered", "w1")
            try await cluster.waitForBrokerLog("worker registered", "w2")
            // First a mix at a steady rate (finals, handler errors, and slow requests that get a progress reply),
            // then a closed loop of slow requests beyond capacity and queue (busy refusals).
            let mix = cluster.directory.appendingPathComponent("mix.json")
            try Data(
                """
                [{"weight": 6, "phase": "handle", "intent": {"type": "Echo", "parameters": {"text": "fast"}}},
                 {"weight": 2, "phase": "handle", "intent": {"type": "Echo", "parameters": {"text": "x", "delayMs": -1}}},
                 {"weight": 2, "phase": "handle", "intent": {"type": "Echo", "parameters": {"text": "s", "delayMs": 200}}}]
                """.utf8
            ).write(to: mix)
            var outcomes: JSONObject = [:]
            for arguments in [
                ["--mix", mix.path, "--rate", "100", "--requests", "200", "--deadline-ms", "100"],
                ["--delay-ms", "200", "--concurrency", "20", "--requests", "60", "--deadline-ms", "1000"],
            ] {
                let load = try runConcierge(
                    ["load", "--broker", cluster.frontend, "--warmup", "0s", "--quiet", "--json"] + arguments)
                let summary = try JSONValue.parse(Array(load.output.utf8))
                let counted = try #require(summary["outcomes"]?.objectValue, "\(load.output)\(load.error)")
                outcomes.merge(counted) { .int(Int64(($0.intValue ?? 0) + ($1.intValue ?? 0))) }
            }
            func saw(_ prefix: String) -> Double {
                Double(outcomes.filter { $0.key.hasPrefix(prefix) }.compactMap { $0.value.intValue }.reduce(0, +))
            }
            #expect(saw("unanswered") == 0)
            let final = saw("final."), busy = saw("error.busy"), progress = saw("progress")
            let failed = saw("error.") - busy
            // The load is made to produce every kind (a failure here means the load changed, not the metrics).
            #expect(final > 0 && busy > 0 && progress > 0 && failed > 0, "\(outcomes)")
            // Gauges follow within about a second; counters at once: wait for the last of them.
            var scrape = Scrape("")
            try await waitUntil("the broker's counters match the load client's outcomes \(outcomes)") {
                scrape = Scrape(try httpGet(port: port, "/metrics").body)
                return scrape.sum("concierge_requests_total") == final + busy + failed
                    && scrape.sum("concierge_requests_in_flight") == 0 && scrape.sum("concierge_workers") == 2
            }
            #expect(scrape.sum("concierge_requests_total", ["outcome": "final"]) == final)
            #expect(scrape.sum("concierge_requests_total", ["outcome": "busy"]) == busy)
            #expect(scrape.sum("concierge_busy_total") == busy)
            #expect(scrape.sum("concierge_requests_total", ["outcome": "handler-error", "intent": "Echo"]) == failed)
            #expect(scrape.sum("concierge_progress_replies_total") == progress)
            // Every accepted request's ending is timed; each first reply once (a progress reply or its ending).
            #expect(scrape.sum("concierge_final_reply_duration_seconds_count") + busy >= final + failed)
            #expect(
                scrape.sum("concierge_first_reply_duration_seconds_count")
                    == scrape.sum("concierge_final_reply_duration_seconds_count"))
            // Per worker: the jobs both ran add up to the replies that came from workers.
            let jobs = scrape.sum("concierge_worker_jobs_total")
            #expect(jobs == final + failed)
            #expect(scrape.sum("concierge_worker_jobs_total", ["worker": "w1"]) > 0)
            #expect(scrape.sum("concierge_worker_jobs_total", ["worker": "w2"]) > 0)
            #expect(scrape.sum("concierge_handler_duration_seconds_count", ["intent": "Echo"]) == jobs)
            #expect(scrape.sum("concierge_workers", ["state": "ready"]) == 2)
            #expect(scrape.sum("concierge_worker_capacity", ["state": "free"]) == 8)
            #expect(scrape.sum("concierge_worker_slots", ["worker": "w1"]) == 4)
            #expect(scrape.sum("concierge_queue_depth", ["intent": "Echo"]) == 0)
            // Bucket edges at the default deadline (3 s) and the hard limit (60 s).
            #expect(
                scrape.samples(named: "concierge_first_reply_duration_seconds_bucket").contains {
                    $0.labels["le"] == "3.0"
                })
            #expect(
                scrape.samples(named: "concierge_final_reply_duration_seconds_bucket").contains {
                    $0.labels["le"] == "60.0"
                })
        }

        /// A queue and its oldest request's age show while workers are busy; /livez stays 200 throughout.
        @Test func queueDepthAndOldestAgeShowWhileRequestsWait() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("w1", capacity: 1)
            try await cluster.waitForBrokerLog("worker registered", "w1")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let running = client.send(
                intent: delayedEcho("first", delayMs: 3000), phase: .handle, deadline: .seconds(60),
                requestID: "first")
            try await client.waitUntilRunning("first")
            let queued = client.send(
                intent: delayedEcho("second"), phase: .handle, deadline: .seconds(60), requestID: "second")
            try await waitUntil("the queue of Echo shows one request waiting") {
                let scrape = Scrape(try httpGet(port: port, "/metrics").body)
                return scrape.sum("concierge_queue_depth", ["intent": "Echo"]) == 1
                    && scrape.sum("concierge_queue_oldest_age_seconds", ["intent": "Echo"]) > 0
                    && scrape.sum("concierge_worker_jobs_in_progress", ["worker": "w1"]) == 1
                    && scrape.sum("concierge_requests_in_flight") == 2
            }
            #expect(try httpGet(port: port, "/livez").status == 200)
            #expect(try await Cluster.replies(running).last?.status == .final)
            #expect(try await Cluster.replies(queued).last?.status == .final)
        }
        #if PostgreSQL

            /// Ready means bound, journal available and a worker registered; live means the loop turns.
            @Test func readinessFollowsWorkersAndTheJournalsDatabase() async throws {
                let started = ContinuousClock.now
                func mark(_ what: String) { print("readiness test: \(what) after \(ContinuousClock.now - started)") }
                let server = try PostgresServer()
                mark("PostgreSQL started")
                let cluster = try Cluster()
                let initialized = try runConcierge(["journal", "init", server.url])
                #expect(initialized.status == 0, "\(initialized.error)")
                try cluster.startBroker(["--http", "127.0.0.1:0", "--journal", server.url])
                let port = try await cluster.brokerHTTPPort()
                let before = try httpGet(port: port, "/readyz")
                #expect(before.status == 503 && before.body.contains("no worker"), "\(before)")
                #expect(try httpGet(port: port, "/livez").status == 200)
                try cluster.startWorker("w1", capacity: 1)
                try await waitUntil("/readyz answers 200 once a worker registered") {
                    try httpGet(port: port, "/readyz").status == 200
                }
                #expect(
                    Scrape(try httpGet(port: port, "/metrics").body).has(
                        "concierge_journal_commit_duration_seconds_count"))
                mark("ready")
                server.stop()
                mark("PostgreSQL stopped")
                try await waitUntil("/readyz answers 503 while the database is away\n\(cluster.log("broker"))") {
                    let ready = try httpGet(port: port, "/readyz")
                    return ready.status == 503 && ready.body.contains("unavailable")
                }
                #expect(try httpGet(port: port, "/livez").status == 200)
                try await waitUntil("concierge_journal_available is 0") {
                    Scrape(try httpGet(port: port, "/metrics").body).sum("concierge_journal_available") == 0
                }
                mark("not ready")
                try server.start()
                mark("PostgreSQL started again")
                try await waitUntil("/readyz answers 200 again once the database is back and the worker rejoined") {
                    try httpGet(port: port, "/readyz").status == 200
                }
                try await waitUntil("concierge_journal_available is 1 again") {
                    Scrape(try httpGet(port: port, "/metrics").body).sum("concierge_journal_available") == 1
                }
                mark("ready again")
                cluster.signal("w1", SIGTERM)
                try await waitUntil("/readyz answers 503 once the only worker left") {
                    try httpGet(port: port, "/readyz").status == 503
                }
            }
        #endif

        @Test func anAddressOtherHostsCanReachIsRefusedWithoutHTTPInsecure() throws {
            let refused = try runConcierge(["broker", "--http", "0.0.0.0:0"])
            #expect(refused.status == 64 && refused.error.contains("--http-insecure"), "\(refused.error)")
            let malformed = try runConcierge(["broker", "--http", "nonsense"])
            #expect(malformed.status == 64, "\(malformed.error)")
        }
    }
}
