import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentLoad
import Testing

extension LoadRuns {
    /// `concierge load` as a real process: its output, files and exit status.
    @Suite struct LoadCommandLine {
        /// `concierge load` against the cluster, with a long deadline unless the arguments give one: with the default
        /// 3 s, a busy machine's slow pace could get requests shed (`busy`), and these tests count outcomes.
        func load(_ cluster: Cluster, _ arguments: [String]) async throws -> CommandResult {
            let deadline = arguments.contains("--deadline-ms") ? [] : ["--deadline-ms", "30000"]
            return try await runConcierge(["load", "--broker", cluster.frontend] + deadline + arguments)
        }

        @Test func jsonSummaryHasTheRequiredFields() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster, ["--requests", "300", "--concurrency", "10", "--warmup", "0s", "--json", "--quiet"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("req/s"))  // --quiet: no progress lines
            let json = try result.json()
            #expect(json["requests"]?.intValue == 300)
            #expect((json["throughput_rps"]?.doubleValue ?? 0) > 0)
            #expect(json["deadline_misses"]?.intValue != nil)
            #expect(json["outcomes"]?["final.handle.success"]?.intValue == 300)
            #expect(json["mode"] == "closed")
            #expect(json["concurrency"]?.intValue == 10)
            #expect(json["connections"]?.intValue == 4)
            #expect(json["errors"]?.intValue == 0)
            #expect(json["throttled"]?.intValue == 0)
            for key in ["first_reply_us", "final_reply_us"] {
                let values = ["p50", "p90", "p99", "p999", "max"].compactMap { json[key]?[$0]?.intValue }
                #expect(values.count == 5, "\(key)")
                #expect(values == values.sorted(), "\(key): \(values)")
                #expect(json[key]?["count"]?.intValue == 300)
            }
            #expect(
                (json["first_reply_us"]?["p50"]?.intValue ?? .max) <= (json["final_reply_us"]?["p50"]?.intValue ?? 0)
            )
        }

        @Test func tableReportAndProgressLinesWithoutJSON() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster, ["--concurrency", "4", "--duration", "1s", "--warmup", "1500ms", "--payload", "10"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("Concierge load: closed loop, 4 in flight over 4 connection(s)"))
            #expect(result.stdout.contains("final.handle.success"))
            #expect(result.stdout.contains("first reply"))
            #expect(result.stdout.contains("final reply"))
            #expect((try? JSONValue.parse(result.stdout)) == nil)
            // One progress line a second on standard error; the first comes during the warm-up.
            let progress = result.stderr.split(separator: "\n").filter { $0.contains("req/s") }
            #expect(progress.count >= 1, "\(result.stderr)")
            #expect(progress.first?.contains("warm-up") == true, "\(result.stderr)")
        }

        @Test func openLoopFromTheCommandLine() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster, ["--rate", "200", "--duration", "1s", "--warmup", "0s", "--json", "--quiet"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let json = try result.json()
            #expect(json["mode"] == "open")
            #expect(json["target_rate"]?.doubleValue == 200)
            let requests = try #require(json["requests"]?.intValue)
            #expect(abs(requests - 200) <= 20, "\(requests) requests in 1 s at 200/s")
        }

        @Test func brokenLatencyLimitExitsWithStatusOne() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster, ["--requests", "100", "--concurrency", "4", "--warmup", "0s", "--quiet", "--max-p99", "1us"]
            )
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("gate"))
            #expect(result.stderr.contains("final-reply p99"))
            #expect(result.stdout.contains("requests      100"))  // the report is still printed
        }

        @Test func errorLimitPassesAHealthyRun() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster,
                [
                    "--requests", "100", "--concurrency", "4", "--warmup", "0s", "--quiet", "--max-errors", "0",
                    "--max-p99", "60s",
                ]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("gate"))
        }

        @Test func errorLimitFailsARunOfUnknownIntents() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster,
                [
                    "--intent", "Nope", "--parameters", "{}", "--requests", "10", "--concurrency", "4", "--warmup",
                    "0s", "--json", "--quiet", "--max-errors", "0",
                ]
            )
            // 10 requests: fewer than the 20 unknown-intent answers that stop a run (see the test below).
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("gate"))
            #expect(result.stderr.contains("10 errors"))
            let json = try result.json()
            #expect(json["outcomes"] == ["error.unknown-intent": 10])
            #expect(json["workload"] == ["Nope (lifecycle, weight 1)"])
        }

        @Test func aRunOfUnknownIntentsStopsWithStatus2SayingNoWorkerServesIt() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await load(
                cluster,
                ["--intent", "Nope", "--parameters", "{}", "--duration", "60s", "--concurrency", "4", "--quiet"])
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("concierge load: unknown-intent: "), "\(result.stderr)")
            #expect(result.stderr.contains("no worker serves Nope"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout)")
        }

        @Test func mixFileWithPhaseOverride() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let directory = try makeTemporaryDirectory("concierge-load-mix")
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("mix.json")
            try """
            [{"weight": 1, "phase": "handle", "intent": {"type": "SendMessage",
               "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}},
             {"weight": 1, "phase": "handle", "intent": {"type": "SendMessage",
               "parameters": {"recipient": {"displayName": "Anna"}, "content": "Hi"}}}]
            """.write(to: file, atomically: true, encoding: .utf8)
            let result = try await load(
                cluster,
                [
                    "--mix", file.path, "--phase", "resolve", "--requests", "60", "--concurrency", "4", "--warmup",
                    "0s", "--json", "--quiet",
                ]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let json = try result.json()
            let outcomes = try #require(json["outcomes"]?.objectValue)
            #expect(
                Set(outcomes.keys).subtracting(["progress"]) == [
                    "final.resolve.disambiguation", "final.resolve.success",
                ])
            #expect(json["workload"]?.arrayValue?.allSatisfy { $0.stringValue?.contains("(resolve,") == true } == true)
        }

        @Test func unreachableBrokerExitsWithStatusTwo() async throws {
            let directory = try makeTemporaryDirectory("concierge-load-unreachable")
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runConcierge(
                [
                    "load", "--broker", "ipc://\(directory.path)/nobody", "--requests", "10", "--warmup", "0s",
                    "--quiet", "--connect-timeout", "500ms",
                ]
            )
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("unreachable"))
            #expect(result.stdout.isEmpty)
        }

        @Test func interruptEndsTheRunEarlyAndStillReports() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let result = try await runConcierge(
                [
                    "load", "--broker", cluster.frontend, "--concurrency", "4", "--duration", "60s", "--warmup", "0s",
                    "--deadline-ms", "30000", "--json",
                ],
                // Interrupted once it reports progress (a line a second on standard error): it is sending by then.
                timeout: .seconds(30), interruptWhenStandardErrorContains: "req/s"
            )
            #expect(result.reason == .exit && result.status == 0, "\(result.reason) \(result.status): \(result.stderr)")
            let json = try result.json()
            let requests = try #require(json["requests"]?.intValue)
            #expect(requests > 0)
            #expect(json["outcomes"]?["final.handle.success"]?.intValue == requests)
            #expect(json["unanswered"]?.intValue == 0)
            #expect((json["duration_s"]?.doubleValue ?? 60) < 30)
        }

        @Test func writesPercentileDistributionsAndAnHTMLReport() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let directory = try makeTemporaryDirectory("concierge-load-files")
            defer { try? FileManager.default.removeItem(at: directory) }
            let hgrm = directory.appendingPathComponent("x.hgrm")
            let html = directory.appendingPathComponent("x.html")
            let result = try await load(
                cluster,
                [
                    "--requests", "300", "--concurrency", "6", "--warmup", "0s", "--quiet", "--hgrm", hgrm.path,
                    "--html", html.path,
                ]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let final = try String(contentsOf: hgrm, encoding: .utf8)
            let first = try String(contentsOf: directory.appendingPathComponent("x.first.hgrm"), encoding: .utf8)
            for distribution in [final, first] {
                let lines = distribution.split(separator: "\n")
                #expect(
                    lines.first?.split(separator: " ") == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"])
                let maxLine = try #require(lines.first { $0.hasPrefix("#[Max") })
                #expect(maxLine.split(separator: "=").last?.filter(\.isNumber) == "300")
                let lastData = try #require(lines.last { !$0.hasPrefix("#") })
                #expect(lastData.split(separator: " ").dropFirst().first.flatMap { Double($0) } == 1)
                #expect(lastData.split(separator: " ").dropFirst(2).first == "300")
            }
            let page = try String(contentsOf: html, encoding: .utf8)
            #expect(page.contains("<svg"))
            #expect(page.contains("<tr><th>Requests</th><td class=\"n\">300</td>"))
            #expect(page.contains("<th>Command line</th>") && page.contains("--requests 300"))
            #expect(page.contains("final.handle.success"))
            #expect(page.hasSuffix("</html>\n"))
        }

        @Test(arguments: [
            ["--rate", "100", "--concurrency", "5"],
            ["--duration", "10x"],
            ["--warmup=-1s"],
            ["--max-p99", "fast"],
            ["--phase", "sometime"],
            ["--mix", "/nonexistent/concierge-mix.json"],
            ["--intent", "SendMessage", "--parameters", "[1]"],
            ["--intent", "SendMessage", "--parameters", "{not json"],
            ["--delay-ms=-1"],
            ["--concurrency", "0"],
            ["--deadline-ms", "5"],
            ["--client-throttle", "0.5"],
            ["--client-throttle", "nan"],
        ])
        func invalidOptionsAreRejectedBeforeAnythingIsSent(arguments: [String]) async throws {
            let directory = try makeTemporaryDirectory("concierge-load-invalid")
            defer { try? FileManager.default.removeItem(at: directory) }
            // Nothing listens there: a run that got as far as connecting would exit 2, not with a usage error.
            let result = try await runConcierge(
                ["load", "--broker", "ipc://\(directory.path)/nobody", "--quiet"] + arguments, timeout: .seconds(30)
            )
            #expect(result.status == 64, "\(arguments): status \(result.status), \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }

        /// `--duration 1e12s` traps in `LoadDuration.parse` (see LoadDurationTests) instead of failing validation.
        @Test func absurdlyLongDurationIsAUsageErrorNotACrash() async throws {
            let directory = try makeTemporaryDirectory("concierge-load-absurd")
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runConcierge(
                ["load", "--broker", "ipc://\(directory.path)/nobody", "--quiet", "--duration", "1e12s"],
                timeout: .seconds(30)
            )
            do {
                #expect(result.reason == .exit && result.status == 64, "status \(result.status), \(result.reason)")
            }
        }
    }
}
