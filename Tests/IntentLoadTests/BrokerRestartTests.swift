import ConciergeTestKit
import Foundation
import IntentLoad
import Synchronization
import Testing

extension LoadRuns {
    /// A broker killed and started again while the load has requests in flight (PROTOCOL.md 7.2).
    @Suite struct BrokerRestart {
        @Test func requestsTheRestartedBrokerLostEndAsBrokerRestartedNotUnanswered() async throws {
            let cluster = try await Cluster.serving(workers: 1, capacity: 16)
            defer { cluster.stopAll() }
            // Four requests of a minute each; their progress replies (deadline 100 ms) say the broker holds them.
            let configuration = LoadConfiguration(
                endpoint: cluster.frontend, mode: .closed(concurrency: 4), connections: 2, duration: nil,
                requestCount: 4, warmup: .zero, deadlineMilliseconds: 100, drainTimeout: .seconds(30),
                progressInterval: .milliseconds(20)
            )
            let runner = try LoadRunner(configuration: configuration, workload: .echo(delayMilliseconds: 60000))
            let progressReplies = Atomic<Int>(0)
            let run = Task { try await runner.run { progressReplies.store($0.progressReplies, ordering: .relaxed) } }
            let end = ContinuousClock.now + .seconds(30)
            while progressReplies.load(ordering: .relaxed) < 4 {
                guard ContinuousClock.now < end else {
                    runner.stop()
                    Issue.record("no progress reply for every request\n\(cluster.log("broker"))")
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            cluster.signal("broker", SIGKILL)
            #expect(await cluster.waitForExit("broker") != nil)
            try cluster.startBroker()
            let restarted = ContinuousClock.now
            let summary = try await run.value
            let took = ContinuousClock.now - restarted
            #expect(took < .seconds(10), "the run ended \(took) after the restart")
            #expect(summary.requests == 4)
            #expect(summary.outcomes["error.broker-restarted"] == 4, "\(summary.outcomes)")
            #expect(summary.unanswered == 0)
            #expect(summary.errorReplies == 4)
            #expect(summary.finalReplies == 0)
            #expect(summary.strayReplies == 0)
            #expect(summary.finalReply.count == 0)  // no reply came: no latency
            #expect(summary.timeline.map(\.errors).reduce(0, +) == 4)
        }
    }
}
