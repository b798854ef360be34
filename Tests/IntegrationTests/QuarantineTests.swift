import ConciergeJSON
import ConciergeTestKit
import ConciergeTop
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// PROTOCOL.md section 6.7: a request that crashes its workers is quarantined (`worker-crashed`) after
    /// `--max-crash-retries` re-dispatches, while the rest of its type keeps being served.
    @Suite(.serialized) struct QuarantineTests {
        @Test func aRequestThatCrashesItsWorkersIsQuarantinedWhileItsTypeKeepsServing() async throws {
            let cluster = try Cluster()
            // The crashes leave the type short of slots for a while: a queue that stands then is this test's point,
            // not an overload to shed (without this, a busy machine could get healthy requests refused `busy`).
            try cluster.startBroker(["--http", "127.0.0.1:0", "--standing-queue-wait-ms", "0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startPool(workers: 2)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)

            // The bad request crashes the worker that confirms it (a Swift trap, as `intent.size!` on a nil does).
            let bad: JSONValue = ["type": "Echo", "parameters": ["crash": true, "delayPhase": "confirm"]]
            async let badReplies = Cluster.replies(client.send(intent: bad, phase: .confirm, deadline: .seconds(10)))
            // Twenty healthy requests of the same type meanwhile, each with its own deadline.
            let healthy = try await withThrowingTaskGroup(of: [Reply].self) { group in
                for index in 0..<20 {
                    let intent: JSONValue = ["type": "Echo", "parameters": ["text": .string("ok \(index)")]]
                    group.addTask {
                        try await Cluster.replies(client.send(intent: intent, phase: .confirm, deadline: .seconds(10)))
                    }
                }
                var all: [[Reply]] = []
                for try await replies in group { all.append(replies) }
                return all
            }
            let badEnding = try await badReplies
            // Every healthy request ends final, before its deadline (its first reply is its final one).
            #expect(healthy.count == 20)
            for replies in healthy {
                #expect(
                    replies.map(\.status) == [.final], "\(replies.map { String(decoding: $0.body, as: UTF8.self) })")
            }
            // The bad one ends worker-crashed, after at most 2 crashes (1 retry by default).
            let ending = try #require(badEnding.last)
            #expect(ending.status == .error)
            let body = try JSONValue.parse(ending.body)
            #expect(body["code"] == "worker-crashed", "\(body)")
            #expect(ending.phase == "confirm")
            let restarts = cluster.log("pool").components(separatedBy: "worker exited; restarting").count - 1
            #expect((1...2).contains(restarts), "the pool restarted \(restarts) workers")
            // Counted for operators; and the type serves again at once.
            var scrape = Scrape("")
            try await waitUntil("the broker counts the quarantined request") {
                scrape = Scrape(try httpGet(port: port, "/metrics").body)
                return scrape.sum("concierge_requests_quarantined_total") == 1
            }
            #expect(scrape.sum("concierge_requests_total", ["outcome": "worker-crashed"]) == 1)
            let after = try await client.request(
                intent: ["type": "Echo", "parameters": ["text": "after"]], phase: .confirm, deadline: .seconds(10))
            #expect(after.status == .final)
        }
    }
}
