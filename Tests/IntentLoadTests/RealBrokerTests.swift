import ConciergeJSON
import ConciergeTestKit
import Foundation
import Histogram
import IntentLoad
import IntentWire
import Testing

extension LoadRuns {
    /// The load runner against real `concierge broker` and `worker` processes.
    @Suite struct RealBroker {
        /// A closed loop. The deadline is long unless a test is about deadlines: with the default 3 s, a busy
        /// machine's slow pace could get requests shed (`busy`), and these tests count outcomes.
        func closed(
            _ cluster: Cluster, concurrency: Int, connections: Int = 2, requests: Int, deadlineMs: Int = 30000
        ) -> LoadConfiguration {
            LoadConfiguration(
                endpoint: cluster.frontend, mode: .closed(concurrency: concurrency), connections: connections,
                duration: nil, requestCount: requests, warmup: .zero, deadlineMilliseconds: deadlineMs,
                drainTimeout: .seconds(20)
            )
        }

        @Test func closedLoopWithARequestCountMeasuresExactlyThatMany() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 10, requests: 500), workload: .echo(payloadBytes: 100)
            ).run()
            #expect(summary.mode == "closed")
            #expect(summary.concurrency == 10)
            #expect(summary.requests == 500)
            #expect(finalOutcomes(summary) == ["final.handle.success": 500])
            #expect(summary.finalReplies == 500)
            #expect(summary.errorReplies == 0)
            #expect(summary.unanswered == 0)
            #expect(summary.errors == 0)
            #expect(summary.strayReplies == 0)
            #expect(summary.finalReply.count == 500)
            #expect(summary.firstReply.count == 500)
            #expect(summary.finalReplyHistogram.totalCount == 500)
            #expect(summary.firstReply.p50 <= summary.finalReply.p50)
            let final = summary.finalReply
            #expect(
                final.p50 <= final.p90 && final.p90 <= final.p99 && final.p99 <= final.p999 && final.p999 <= final.max)
            #expect(summary.throughputRPS > 0)
            #expect(summary.throughputRPS == summary.answeredRPS)  // no errors
            #expect(summary.timeline.map(\.sent).reduce(0, +) == 500)
            #expect(summary.timeline.map(\.completed).reduce(0, +) == 500)
            #expect(summary.workload == ["Echo (handle, weight 1)"])
        }

        @Test func openLoopSendsAtTheScheduledRate() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let configuration = LoadConfiguration(
                endpoint: cluster.frontend, mode: .open(rate: 400), connections: 2, duration: .seconds(2),
                warmup: .zero, deadlineMilliseconds: 30000, drainTimeout: .seconds(20)
            )
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run()
            #expect(summary.mode == "open")
            #expect(summary.targetRate == 400)
            #expect(abs(summary.requests - 800) <= 80, "\(summary.requests) requests in 2 s at 400/s")
            #expect(abs(summary.offeredRPS - 400) <= 40, "offered \(summary.offeredRPS)/s")
            #expect(summary.requests == summary.finalReplies + summary.errorReplies + summary.unanswered)
            #expect(summary.outcomes["final.handle.success"] == summary.finalReplies)
            #expect(summary.errors == 0)
            #expect(summary.timeline.map(\.sent).reduce(0, +) == summary.requests)
        }

        @Test func slowHandlerGetsAProgressReplyByTheDeadlineThenTheFinalReply() async throws {
            let cluster = try await Cluster.serving(workers: 1, capacity: 16)
            defer { cluster.stopAll() }
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 8, requests: 32, deadlineMs: 50),
                workload: .echo(delayMilliseconds: 300)
            ).run()
            #expect(summary.requests == 32)
            #expect(summary.progressReplies == summary.requests)
            #expect(summary.outcomes["progress"] == summary.requests)
            #expect(summary.finalReplies == summary.requests)
            #expect(summary.outcomes["final.handle.success"] == summary.requests)
            #expect(summary.unanswered == 0 && summary.errorReplies == 0)
            #expect(summary.firstReply.count == 32 && summary.finalReply.count == 32)
            #expect(summary.firstReply.p50 < summary.finalReply.p50)
            #expect(summary.firstReply.p99 < summary.finalReply.p99)
        }

        @Test func resolveMixCountsEveryResolutionKind() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let workload = try mix(
                """
                [{"label": "two Johns", "intent": {"type": "SendMessage",
                   "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}},
                 {"label": "a favourite Kate", "intent": {"type": "SendMessage",
                   "parameters": {"recipient": {"displayName": "Kate"}, "content": "Hi"}}},
                 {"label": "nobody", "intent": {"type": "SendMessage",
                   "parameters": {"recipient": {"displayName": "Zed"}, "content": "Hi"}}},
                 {"label": "no recipient", "intent": {"type": "SendMessage", "parameters": {"content": "Hi"}}},
                 {"label": "Anna", "intent": {"type": "SendMessage",
                   "parameters": {"recipient": {"displayName": "Anna"}, "content": "Hi"}}}]
                """,
                phase: .resolve
            )
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 10, requests: 200), workload: workload
            ).run()
            let outcomes = finalOutcomes(summary)
            #expect(
                Set(outcomes.keys) == [
                    "final.resolve.disambiguation", "final.resolve.confirmationRequired", "final.resolve.unsupported",
                    "final.resolve.needsValue", "final.resolve.success",
                ]
            )
            #expect(outcomes.values.reduce(0, +) == summary.requests)
            #expect(summary.requests == 200)
            #expect(summary.errors == 0)
            #expect(summary.finalReplies == 200)
        }

        @Test func handlerFailureInResolveIsCountedAsAnError() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let workload = try mix(
                """
                [{"label": "fails", "intent": {"type": "Echo",
                   "parameters": {"text": "x", "failWith": "boom", "delayPhase": "resolve"}}},
                 {"label": "works", "intent": {"type": "Echo", "parameters": {"text": "y"}}}]
                """,
                phase: .resolve
            )
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 4, requests: 100), workload: workload
            ).run()
            let outcomes = finalOutcomes(summary)
            #expect(Set(outcomes.keys) == ["error.handler-failed", "final.resolve.success"])
            #expect(summary.errorReplies == outcomes["error.handler-failed"])
            #expect(summary.finalReplies == outcomes["final.resolve.success"])
            #expect(summary.errors == summary.errorReplies)
            #expect(summary.errorReplies + summary.finalReplies == 100)
            #expect(summary.answeredRPS > summary.throughputRPS)
            #expect(LoadGate(maxErrors: 0).violations(of: summary).count == 1)
        }

        @Test func onlyFailingRequestsHaveNoThroughput() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let workload = try mix(
                #"[{"intent": {"type": "Echo", "parameters": {"failWith": "boom", "delayPhase": "resolve"}}}]"#,
                phase: .resolve
            )
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 4, requests: 50), workload: workload
            ).run()
            #expect(finalOutcomes(summary) == ["error.handler-failed": 50])
            #expect(summary.errorReplies == 50)
            #expect(summary.finalReplies == 0)
            #expect(summary.throughputRPS == 0)
            #expect(summary.answeredRPS > 0)
            #expect(summary.finalReply.count == 50)  // error replies end requests too
        }

        @Test func intentTypeNobodyServesIsAnUnknownIntentError() async throws {
            let cluster = try await Cluster.serving(workers: 1)
            defer { cluster.stopAll() }
            let workload = try mix(#"[{"intent": {"type": "Nope", "parameters": {}}}]"#)
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 5, requests: 15), workload: workload
            ).run()
            // 15 requests: fewer than the 20 unknown-intent answers that stop a run (see below).
            #expect(summary.outcomes == ["error.unknown-intent": 15])
            #expect(summary.errorReplies == 15)
            #expect(summary.errors == 15)
            #expect(summary.finalReplies == 0)
        }

        @Test func lifecycleRequestsEndInTheHandlePhase() async throws {
            let cluster = try await Cluster.serving(workers: 2)
            defer { cluster.stopAll() }
            let summary = try await LoadRunner(
                configuration: closed(cluster, concurrency: 6, requests: 120),
                workload: .echo(payloadBytes: 10, phase: .lifecycle)
            ).run()
            #expect(finalOutcomes(summary) == ["final.handle.success": 120])
        }

        @Test func brokerEndpointWithNothingListeningIsUnreachable() async throws {
            let cluster = try Cluster()  // its endpoints, but nothing started
            defer { cluster.stopAll() }
            let configuration = LoadConfiguration(
                endpoint: cluster.frontend, mode: .closed(concurrency: 4), connections: 2, duration: .seconds(1),
                warmup: .zero, connectTimeout: .milliseconds(400)
            )
            let runner = try LoadRunner(configuration: configuration, workload: .echo())
            let error = await #expect(throws: LoadError.self) { try await runner.run() }
            #expect(error?.code == .unreachable)
        }

        /// An intent nobody serves is answered `unknown-intent` at once: the run stops after the first 20 such
        /// answers, saying why, instead of measuring how fast the broker says so for a minute.
        @Test func aRunWhoseEveryAnswerIsUnknownIntentStopsEarlySayingNoWorkerServesIt() async throws {
            let cluster = try Cluster()
            defer { cluster.stopAll() }
            try cluster.startBroker(["--startup-grace-ms", "0"])
            let configuration = LoadConfiguration(
                endpoint: cluster.frontend, mode: .closed(concurrency: 4), connections: 1, duration: .seconds(60),
                warmup: .seconds(1), deadlineMilliseconds: 30000, drainTimeout: .seconds(5))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: LoadError.self) {
                _ = try await LoadRunner(configuration: configuration, workload: .echo()).run()
            }
            #expect(error?.code == .unknownIntent)
            #expect(error?.message.contains("no worker serves Echo") == true, "\(String(describing: error))")
            #expect(start.duration(to: clock.now) < .seconds(30))
        }
    }
}
