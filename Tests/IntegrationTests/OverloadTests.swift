import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import Testing

/// Overload behaviour with real processes: what the queue cannot start before the deadline is shed at once.
@Suite(.serialized) struct OverloadTests {
    func echo(_ parameters: [String: JSONValue]) -> JSONValue {
        ["type": "Echo", "parameters": .object(parameters)]
    }

    @Test func burstBeyondTheQueuesPaceIsShedAtArrivalAndTheRestIsServed() async throws {
        let cluster = try Cluster()
        try cluster.startBroker()
        try cluster.startWorker("single", capacity: 1)
        let client = try cluster.client()
        try await cluster.waitUntilServing(client)
        // Teach the broker this type's pace: one 100 ms job at a time, about 10 jobs/s at most.
        for index in 0..<4 {
            let reply = try await client.request(
                intent: echo(["text": .string("pace \(index)"), "delayMs": 100]), phase: .handle)
            #expect(reply.status == .final)
        }
        // 20 at once with a 1 s deadline: the queue can start about 8 of them in time, the rest must hear `busy`.
        let streams = (0..<20).map {
            client.send(
                intent: echo(["text": .string("burst \($0)"), "delayMs": 100]), phase: .handle, deadline: .seconds(1))
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
        #expect(busy + served == 20)
        #expect(served >= 1)
        #expect(busy >= 10)
        #expect(busyAtArrival >= 1)
        // Nothing was left behind: the worker serves the next request at once.
        let next = try await client.request(intent: echo(["text": "after"]), phase: .handle)
        #expect(next.body_["handle"]?["data"]?["text"] == "after")
    }
}
