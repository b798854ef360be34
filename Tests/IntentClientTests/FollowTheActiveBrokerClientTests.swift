import ConciergeJSON
import Foundation
import IntentClient
import IntentWire
import Testing

/// The client library with several broker endpoints, against scripted brokers: it moves to the next endpoint when a
/// connection completes no handshake (a standby binds nothing) and when a broker answers `unavailable`, sends again
/// what never left, and fails requests in flight only after its reconnect timeout.
@Suite struct FollowTheActiveBrokerClientTests {
    static let intent: JSONValue = ["type": "Echo", "parameters": ["text": "hi"]]
    static let finalBody = #"{"intent":{"type":"Echo"},"handle":{"code":"success"}}"#

    /// An `ipc://` endpoint nobody binds (a standby).
    func unbound() -> String {
        "ipc://\(FileManager.default.temporaryDirectory.path)/concierge-nobody-\(UInt32.random(in: 0...UInt32.max))"
    }

    @Test func aRequestSentWhileTheFirstEndpointIsUnboundReachesTheSecond() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try ConciergeClient(
            configuration: .init(
                brokerEndpoints: [unbound(), broker.endpoint], heartbeatInterval: .milliseconds(100)))
        defer { client.close() }
        let started = ContinuousClock.now
        // Sent at once, so queued on the socket to the unbound endpoint: it never left, so it is sent again.
        let task = Task { try await client.request(intent: Self.intent, phase: .handle, requestID: "r1") }
        let requests = try await broker.waitFor(CIP.Client.request)
        #expect(requests.count == 1 && requests[0][2] == Array("r1".utf8))
        broker.reply(Array("r1".utf8), status: CIP.Status.final, body: Self.finalBody)
        let reply = try await task.value
        #expect(reply.status == .final)
        print("reached the second endpoint and was answered in \(ContinuousClock.now - started)")
        // Nothing asked STATUS about it: the REQUEST was sent again, not swept.
        #expect(broker.messages(CIP.Client.status).isEmpty)
    }

    @Test func anUnavailableAnswerMovesTheClientToTheNextEndpointAndIsRetried() async throws {
        let first = try ScriptedBroker()
        defer { first.stop() }
        let second = try ScriptedBroker()
        defer { second.stop() }
        let client = try ConciergeClient(
            configuration: .init(brokerEndpoints: [first.endpoint, second.endpoint], heartbeatInterval: .seconds(5)))
        defer { client.close() }
        let task = Task {
            try await client.request(
                intent: Self.intent, phase: .handle, retry: RetryPolicy(maxAttempts: 3, initialBackoff: .zero))
        }
        let toFirst = try await first.waitFor(CIP.Client.request)
        first.replyError(toFirst[0][2], code: .unavailable)
        let toSecond = try await second.waitFor(CIP.Client.request)
        // The retry carries the same idempotency key (F7).
        #expect(toSecond[0].count == 8 && toSecond[0][7] == toFirst[0][7])
        second.reply(toSecond[0][2], status: CIP.Status.final, body: Self.finalBody)
        let reply = try await task.value
        #expect(reply.status == .final)
        #expect(reply.attempts == 2)
        #expect(first.messages(CIP.Client.request).count == 1)
    }

    @Test func anUnavailableAnswerWithoutRetryIsTheCallersEnding() async throws {
        let first = try ScriptedBroker()
        defer { first.stop() }
        let second = try ScriptedBroker()
        defer { second.stop() }
        let client = try ConciergeClient(
            configuration: .init(brokerEndpoints: [first.endpoint, second.endpoint], heartbeatInterval: .seconds(5)))
        defer { client.close() }
        let task = Task { try await client.request(intent: Self.intent, phase: .handle, requestID: "u1") }
        try await first.waitFor(CIP.Client.request)
        first.replyError(Array("u1".utf8), code: .unavailable)
        let reply = try await task.value
        #expect(reply.status == .error && reply.errorCode == "unavailable")
        // The next request goes to the next endpoint.
        let next = Task { try await client.request(intent: Self.intent, phase: .handle, requestID: "u2") }
        let requests = try await second.waitFor(CIP.Client.request)
        second.reply(requests[0][2], status: CIP.Status.final, body: Self.finalBody)
        #expect(try await next.value.status == .final)
    }

    @Test func statusAndCancelSentToALostBrokerAreSentAgainToTheNextOne() async throws {
        let first = try ScriptedBroker()
        let second = try ScriptedBroker()
        defer { second.stop() }
        let client = try ConciergeClient(
            configuration: .init(
                brokerEndpoints: [first.endpoint, second.endpoint], heartbeatInterval: .milliseconds(100)))
        defer { client.close() }
        let request = Task { try await client.request(intent: Self.intent, phase: .handle, requestID: "r1") }
        try await first.waitFor(CIP.Client.request)
        let status = Task { try await client.status(of: "r1") }
        try await first.waitFor(CIP.Client.status)
        let cancel = Task { try await client.cancel(requestID: "r1") }
        try await first.waitFor(CIP.Client.cancel)
        first.stop()  // the active broker dies without answering
        // On the next broker: the caller's STATUS again, the sweep's STATUS, and the CANCEL again; no REQUEST (it
        // reached the first broker, which shares its journal with this one).
        try await second.waitFor(CIP.Client.status, count: 2)
        try await second.waitFor(CIP.Client.cancel)
        #expect(second.messages(CIP.Client.request).isEmpty)
        let id = Array("r1".utf8)
        second.status(id, status: CIP.Status.progress, body: #"{"state":"running"}"#)  // the caller's
        second.status(id, status: CIP.Status.progress, body: #"{"state":"running"}"#)  // the sweep's
        #expect(try await status.value.status == .progress)
        second.replyError(id, code: .cancelled)
        let ending = try await request.value
        #expect(ending.status == .error && ending.errorCode == "cancelled")
        #expect(try await cancel.value.errorCode == "cancelled")
    }

    @Test func requestsInFlightFailOnlyAfterTheReconnectTimeout() async throws {
        let client = try ConciergeClient(
            configuration: .init(
                brokerEndpoints: [unbound(), unbound()], heartbeatInterval: .milliseconds(50), heartbeatLiveness: 2,
                reconnectTimeout: .milliseconds(1500)))
        defer { client.close() }
        let started = ContinuousClock.now
        let error = await #expect(throws: ClientError.self) {
            try await client.request(intent: Self.intent, phase: .handle)
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .connectionLost, "\(String(describing: error))")
        // Silence is noticed after 100 ms; the requests wait the reconnect timeout on top of it, not less.
        #expect(elapsed >= .milliseconds(1500), "\(elapsed)")
        print("connection-lost after \(elapsed) (liveness 100 ms, reconnect timeout 1.5 s)")
    }
}
