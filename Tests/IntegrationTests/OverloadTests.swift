import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// Overload behaviour with real processes: what the queue cannot start before the deadline is shed at once.
    @Suite(.serialized) struct OverloadTests {
        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        @Test func burstBeyondTheQueuesPaceIsShedAtArrivalAndTheRestIsServed() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("single", capacity: 1)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // Teach the broker this type's pace: one 100 ms job at a time, about 10 jobs/s at most. The broker sheds at
            // arrival only by the fastest pace its answers make likely: 8 answers put that near 20 jobs/s.
            for index in 0..<8 {
                let reply = try await client.request(
                    intent: echo(["text": .string("pace \(index)"), "delayMs": 100]), phase: .handle)
                #expect(reply.status == .final)
            }
            // 40 at once with a 1 s deadline: the queue can start about 8 of them in time, the rest must hear `busy`,
            // and those beyond what even 20 jobs/s would start in 800 ms hear it at once.
            let streams = (0..<40).map {
                client.send(
                    intent: echo(["text": .string("burst \($0)"), "delayMs": 100]), phase: .handle,
                    deadline: .seconds(1))
            }
            var busy = 0
            var busyAtArrival = 0
            var served = 0
            for stream in streams {
                let replies = try await Cluster.replies(stream)
                let last = try #require(replies.last)
                #expect(replies.count == 1 || (replies.count == 2 && replies[0].status == .progress))
                if last.status == .final {
                    served += 1
                } else {
                    #expect(last.errorCode == "busy")
                    busy += 1
                    // Shed on arrival (not at the deadline): the message names the queue it would have waited in.
                    if last.body_["message"]?.stringValue?.contains("queued") == true { busyAtArrival += 1 }
                }
            }
            #expect(busy + served == 40)
            #expect(served >= 1)
            #expect(busy >= 20)
            #expect(busyAtArrival >= 1)
            // Nothing was left behind: the worker serves the next request at once.
            let next = try await client.request(intent: echo(["text": "after"]), phase: .handle)
            #expect(next.body_["handle"]?["data"]?["text"] == "after")
        }

        @Test func atTwiceTheCapacityNothingIsLostAndEveryFirstReplyIsInTime() async throws {
            let cluster = try Cluster()
            // A 2 s deadline, acted on 200 ms early (the reply margin, at most a tenth of the deadline): a first
            // reply in time must not depend on the broker and the load client never pausing for 50 ms, which a busy
            // machine does not promise. Every first reply is still checked against the deadline.
            try cluster.startBroker(["--reply-margin-ms", "200"])
            try cluster.startWorker("slow", capacity: 2)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // Two 20 ms jobs at a time: about 100 requests/s. The load client offers 200/s for 3 s: the queue grows by
            // about 100 a second, so after about 1.6 s new requests could not start within 80% of their deadline.
            // It sends every request (`--ignore-pushback`): this is the broker's own shedding (ThrottleTests has the
            // client that heeds the broker's pushback).
            try cluster.start(
                "load",
                [
                    "load", "--broker", cluster.frontend, "--rate", "200", "--duration", "3s", "--warmup", "0s",
                    "--delay-ms", "20", "--deadline-ms", "2000", "--drain-timeout", "5s", "--json", "--quiet",
                    "--max-deadline-misses", "0", "--ignore-pushback",
                ]
            )
            let status = await cluster.waitForExit("load", seconds: 30)
            let output = cluster.log("load")
            #expect(status == 0, "\(output)")
            let summary = try JSONValue.parse(output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(summary["deadline_misses"] == 0)
            #expect(summary["unanswered"] == 0)
            let outcomes = try #require(summary["outcomes"]?.objectValue)
            // Every request ended in a final reply (maybe after a progress reply) or was refused with busy.
            #expect(Set(outcomes.keys).isSubset(of: ["final.handle.success", "progress", "error.busy"]), "\(outcomes)")
            let served = outcomes["final.handle.success"]?.int64Value ?? 0
            let busy = outcomes["error.busy"]?.int64Value ?? 0
            #expect(served > 0)
            #expect(busy > 0, "the load never exceeded the capacity")
            #expect(served + busy == summary["requests"]?.int64Value)
        }

        @Test func aBurstAfterAFewSlowRequestsIsServedNotShed() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("roomy", capacity: 4)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            // One slow request at a time: the worker is never full, so this says nothing about how fast a queue moves.
            for index in 0..<2 {
                let reply = try await client.request(
                    intent: echo(["text": .string("slow \(index)"), "delayMs": 400]), phase: .handle)
                #expect(reply.status == .final)
            }
            // Then a burst of quick ones with the default 3 s deadline: a few wait, none is refused.
            let streams = (0..<40).map { client.send(intent: echo(["text": .string("quick \($0)")]), phase: .handle) }
            for stream in streams {
                let last = try #require(try await Cluster.replies(stream).last)
                #expect(last.status == .final, "\(last.errorCode ?? "") \(last.body_["message"]?.stringValue ?? "")")
            }
        }
    }
}
