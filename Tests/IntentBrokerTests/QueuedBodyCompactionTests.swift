import IntentWire
import Testing

@testable import IntentBroker

/// A queued request's body gets an allocation of its own (``BrokerCore/compactQueuedBody``) only when it
/// waits behind ``BrokerCore/uncompactedQueueLimit`` others, so that a short queue costs no copies and a long one
/// keeps at most that many receive buffers.
@Suite struct QueuedBodyCompactionTests {
    /// Counts the copies the core asks for and marks each copied body, so a test sees which bodies were copied.
    final class Copies {
        var count = 0
    }

    static let copiedMark = Array("copied:".utf8)

    static func harness(counting copies: Copies) throws -> CoreHarness {
        var broker = try CoreHarness()
        broker.core.compactQueuedBody = { body in
            copies.count += 1
            return copiedMark + body
        }
        broker.register("w1", capacity: 1)
        return broker
    }

    @Test func bodiesQueuedBehindFewerThanTheLimitAreNotCopied() throws {
        let copies = Copies()
        var broker = try Self.harness(counting: copies)
        let limit = BrokerCore<[UInt8]>.uncompactedQueueLimit
        broker.send("running", deadlineMs: 60_000)  // a worker has room: it never waits
        for index in 0..<limit { broker.send("early\(index)", deadlineMs: 60_000) }
        #expect(broker.queued == limit)
        #expect(copies.count == 0)
        for index in 0..<5 { broker.send("late\(index)", deadlineMs: 60_000) }
        #expect(copies.count == 5)
        // The worker gets each body as it arrived, copied or not; the copied ones are exactly the late ones.
        var copiedJobs: [String] = []
        while let job = broker.jobs["w1"]?.first {
            if job.body.starts(with: Self.copiedMark), let id = broker.requestID(of: job) { copiedJobs.append(id) }
            broker.answer("w1")
        }
        #expect(copiedJobs == (0..<5).map { "late\($0)" })
        #expect(broker.queued == 0)
    }

    @Test func theLimitHoldsWhateverOrderTheQueueTakesRequestsIn() throws {
        // Fair lanes take a light client's request before the flood's older ones; the count of uncopied bodies still
        // waiting never exceeds the limit.
        let copies = Copies()
        var broker = try Self.harness(counting: copies)
        let limit = BrokerCore<[UInt8]>.uncompactedQueueLimit
        broker.send("running", deadlineMs: 60_000, client: "flood")
        var sent = 0
        for round in 0..<6 {
            for index in 0..<(limit / 2) {
                broker.send("f\(round)-\(index)", deadlineMs: 60_000, client: "flood")
                sent += 1
            }
            broker.send("light\(round)", deadlineMs: 60_000, client: "light")
            sent += 1
            for _ in 0..<(limit / 4) { broker.answer("w1") }
            let waiting = broker.core.requests.values.filter { request in
                request.isQueued && !request.body.starts(with: Self.copiedMark)
            }
            #expect(waiting.count <= limit, "round \(round): \(waiting.count) uncopied bodies wait")
        }
        #expect(copies.count > 0)
        #expect(copies.count < sent)
    }
}
