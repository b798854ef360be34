import ConciergeJSON
import IntentClient
import IntentWire
import Synchronization
import Testing

/// The client library against a scripted broker: exactly what it sends when a Task is cancelled, when
/// ``ConciergeClient/cancel(requestID:)`` is called and when a ``RetryPolicy`` retries, and what it does with the
/// answers (PROTOCOL.md 4.9, 4.10.2).
@Suite struct CancelAndRetryTests {
    static let intent: JSONValue = ["type": "Echo", "parameters": ["text": "hi"]]
    static let finalBody = #"{"intent":{"type":"Echo"},"handle":{"code":"success"}}"#

    func client(_ broker: ScriptedBroker) throws -> ConciergeClient {
        try ConciergeClient(configuration: .init(brokerEndpoint: broker.endpoint, heartbeatInterval: .seconds(5)))
    }

    // MARK: Cancellation

    @Test func cancellingTheTaskOfAStreamSendsCancelAndDropsTheLateEnding() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let received = Counter()
        let task = Task {
            for try await _ in client.send(intent: Self.intent, phase: .handle, requestID: "a1") {
                received.increment()
            }
        }
        try await broker.waitFor(CIP.Client.request)
        task.cancel()
        let cancels = try await broker.waitFor(CIP.Client.cancel)
        // CIPC02 CANCEL <id>, 3 frames (even for a version-1 request).
        #expect(cancels == [[CIP.clientSignatureV2.bytes, CIP.Client.cancel.bytes, Array("a1".utf8)]])
        #expect(broker.messages(CIP.Client.request)[0][0] == CIP.clientSignature.bytes)
        _ = await task.result
        // Until the broker ends it, the id is in flight: the client refuses it, as the broker would.
        do {
            _ = try await client.request(intent: Self.intent, requestID: "a1")
            Issue.record("a second request a1 was accepted while the first was in flight")
        } catch let error as ClientError {
            #expect(error.code == .duplicateRequest)
        }
        // The ending comes; it goes nowhere (the stream is finished), and the id is free again. The PONG comes after
        // it (the scripted broker sends what is queued before it answers a PING), so it has been handled by then.
        broker.replyError(Array("a1".utf8), code: .cancelled)
        try await client.ping()
        #expect(received.value == 0, "a reply reached the cancelled stream")
        let next = Task { try await client.request(intent: Self.intent, requestID: "a1") }
        try await broker.waitFor(CIP.Client.request, count: 2)
        broker.reply(Array("a1".utf8), status: CIP.Status.final, body: Self.finalBody)
        let reply = try await next.value
        #expect(reply.status == .final)
        #expect(broker.messages(CIP.Client.cancel).count == 1)
    }

    @Test func cancellingTheTaskOfARequestThrowsCancellationErrorAndSendsCancel() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let task = Task { try await client.request(intent: Self.intent, phase: .handle, requestID: "b1") }
        try await broker.waitFor(CIP.Client.request)
        task.cancel()
        let result = await task.result
        #expect(result.failure is CancellationError, "\(result)")
        let cancels = try await broker.waitFor(CIP.Client.cancel)
        #expect(cancels.map { $0[2] } == [Array("b1".utf8)])
    }

    @Test func cancelReturnsTheEndingThatTheStreamGetsToo() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let stream = client.send(intent: Self.intent, phase: .handle, requestID: "c1")
        let replies = Task {
            var all: [Reply] = []
            for try await reply in stream { all.append(reply) }
            return all
        }
        try await broker.waitFor(CIP.Client.request)
        let cancel = Task { try await client.cancel(requestID: "c1") }
        try await broker.waitFor(CIP.Client.cancel)
        broker.replyError(Array("c1".utf8), code: .cancelled)
        let ending = try await cancel.value
        #expect(ending.errorCode == "cancelled")
        #expect(try await replies.value.map(\.errorCode) == ["cancelled"])
    }

    @Test func cancelAfterTheRequestFinishedGetsItsFinal() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let stream = client.send(intent: Self.intent, phase: .handle, requestID: "d1")
        try await broker.waitFor(CIP.Client.request)
        let cancel = Task { try await client.cancel(requestID: "d1") }
        try await broker.waitFor(CIP.Client.cancel)
        // It finished first: the final is the answer (and the broker's STATUS-like answer to the CANCEL, sent after
        // it, is extra and ignored).
        broker.reply(Array("d1".utf8), status: CIP.Status.final, body: Self.finalBody)
        broker.status(Array("d1".utf8), status: CIP.Status.final, phase: "handle", body: Self.finalBody)
        #expect(try await cancel.value.status == .final)
        var statuses: [Reply.Status] = []
        for try await reply in stream { statuses.append(reply.status) }
        #expect(statuses == [.final])
    }

    @Test func cancelOfAnIdNotInFlightReturnsTheBrokersStatusAnswer() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        try await client.ping()
        let cancel = Task { try await client.cancel(requestID: "nobody") }
        let cancels = try await broker.waitFor(CIP.Client.cancel)
        #expect(cancels == [[CIP.clientSignatureV2.bytes, CIP.Client.cancel.bytes, Array("nobody".utf8)]])
        broker.status(
            Array("nobody".utf8), status: CIP.Status.error,
            body: #"{"code":"unknown-request","message":"no such request"}"#)
        let answer = try await cancel.value
        #expect(answer.errorCode == "unknown-request")
        await #expect(throws: ClientError.self) { try await client.cancel(requestID: "") }
    }

    @Test func aBrokerWithoutCancelLeavesTheRequestRunning() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let stream = client.send(intent: Self.intent, phase: .handle, requestID: "e1")
        try await broker.waitFor(CIP.Client.request)
        let cancel = Task { try await client.cancel(requestID: "e1") }
        try await broker.waitFor(CIP.Client.cancel)
        // Check 3 of PROTOCOL.md 4.8: unknown-command, echoing F2.
        broker.replyError(Array("e1".utf8), code: .unknownCommand)
        let result = await cancel.result
        #expect((result.failure as? ClientError)?.code == .cancelUnsupported, "\(result)")
        broker.reply(Array("e1".utf8), status: CIP.Status.final, body: Self.finalBody)
        var statuses: [Reply.Status] = []
        for try await reply in stream { statuses.append(reply.status) }
        #expect(statuses == [.final])
    }

    // MARK: Retries

    @Test func retryableErrorsAreRetriedWithTheSameKeyAndBodyAndANewID() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let events = Mutex<[RequestEvent]>([])
        let policy = RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5))
        let task = Task {
            try await client.request(
                intentType: "Echo", phase: .handle, body: Array(#"{"intent":{"type":"Echo"}}"#.utf8),
                requestID: "f1", retry: policy, events: { event in events.withLock { $0.append(event) } })
        }
        var requests = try await broker.waitFor(CIP.Client.request)
        broker.replyError(requests[0][2], code: .busy)
        requests = try await broker.waitFor(CIP.Client.request, count: 2)
        broker.replyError(requests[1][2], code: .workerLost)
        requests = try await broker.waitFor(CIP.Client.request, count: 3)
        broker.reply(requests[2][2], status: CIP.Status.final, body: Self.finalBody)
        let reply = try await task.value
        #expect(reply.status == .final)
        #expect(reply.attempts == 3)
        #expect(reply.requestID == String(decoding: requests[2][2], as: UTF8.self))
        #expect(requests.allSatisfy { $0.count == 8 && $0[0] == CIP.clientSignatureV2.bytes })
        let key = requests[0][7]
        #expect(!key.isEmpty)
        #expect(requests.allSatisfy { $0[7] == key && $0[6] == requests[0][6] })
        #expect(requests[0][2] == Array("f1".utf8))
        #expect(Set(requests.map { $0[2] }).count == 3)
        let retried = events.withLock { $0 }.compactMap { event -> String? in
            if case .retrying(_, let code, _) = event { return code }
            return nil
        }
        #expect(retried == ["busy", "worker-lost"])
    }

    @Test(arguments: [WireErrorCode.idempotencyConflict, .cancelled, .badBody, .handlerFailed, .invalidType])
    func otherErrorsEndTheRequestAtOnce(code: WireErrorCode) async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let task = Task {
            try await client.request(
                intent: Self.intent, phase: .handle, idempotencyKey: "k-\(code)",
                retry: RetryPolicy(maxAttempts: 5, initialBackoff: .milliseconds(1)))
        }
        let requests = try await broker.waitFor(CIP.Client.request)
        broker.replyError(requests[0][2], code: code)
        let reply = try await task.value
        #expect(reply.errorCode == code.rawValue)
        #expect(reply.attempts == 1)
        #expect(requests[0][7] == Array("k-\(code)".utf8))
        // Another request goes out after it: had the error been retried, its retry would be the second REQUEST.
        let after = Task { try await client.request(intent: Self.intent, requestID: "after") }
        let all = try await broker.waitFor(CIP.Client.request, count: 2)
        #expect(all[1][2] == Array("after".utf8))
        broker.reply(all[1][2], status: CIP.Status.final, body: Self.finalBody)
        _ = try await after.value
    }

    @Test func theLastAttemptsErrorIsReturnedWithItsCount() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let task = Task {
            try await client.request(
                intent: Self.intent, phase: .handle, retry: RetryPolicy(maxAttempts: 2, initialBackoff: .zero))
        }
        var requests = try await broker.waitFor(CIP.Client.request)
        broker.replyError(requests[0][2], code: .timeout)
        requests = try await broker.waitFor(CIP.Client.request, count: 2)
        broker.replyError(requests[1][2], code: .timeout)
        let reply = try await task.value
        #expect(reply.errorCode == "timeout")
        #expect(reply.attempts == 2)
    }

    @Test func cancellingDuringTheBackoffStopsTheRetries() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let backingOff = Counter()
        let task = Task {
            try await client.request(
                intent: Self.intent, phase: .handle,
                retry: RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(60), maxBackoff: .seconds(60)),
                events: { event in if case .retrying = event { backingOff.increment() } })
        }
        let requests = try await broker.waitFor(CIP.Client.request)
        broker.replyError(requests[0][2], code: .busy)
        try await waitUntil("the retry loop waits") { backingOff.value == 1 }
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(result.failure is CancellationError, "\(result)")
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(broker.messages(CIP.Client.request).count == 1)
    }

    @Test func cancellingDuringAnAttemptCancelsThatAttempt() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let task = Task {
            try await client.request(
                intent: Self.intent, phase: .handle, retry: RetryPolicy(maxAttempts: 3, initialBackoff: .zero))
        }
        var requests = try await broker.waitFor(CIP.Client.request)
        broker.replyError(requests[0][2], code: .workerLost)
        requests = try await broker.waitFor(CIP.Client.request, count: 2)
        task.cancel()
        #expect(await task.result.failure is CancellationError)
        let cancels = try await broker.waitFor(CIP.Client.cancel)
        #expect(cancels.map { $0[2] } == [requests[1][2]])
        #expect(broker.messages(CIP.Client.request).count == 2)
    }
}

/// A count shared between tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension CancelAndRetryTests {
    /// A CANCEL about a request this client does not track (sent by an earlier client with the same routing id) is
    /// answered by that request's ending REPLY; a STATUS query sent after it gets the broker's `progress` STATUS
    /// answer, which is never the answer to a CANCEL.
    @Test func aProgressStatusAnswerGoesToTheStatusQueryNotToTheCancel() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        try await client.ping()
        let cancel = Task { try await client.cancel(requestID: "old") }
        try await broker.waitFor(CIP.Client.cancel)
        let status = Task { try await client.status(of: "old") }
        try await broker.waitFor(CIP.Client.status)
        broker.status(Array("old".utf8), status: CIP.Status.progress, phase: "handle", body: #"{"state":"running"}"#)
        broker.replyError(Array("old".utf8), code: .cancelled)
        let cancelAnswer = Answer()
        let statusAnswer = Answer()
        Task { cancelAnswer.set(try? await cancel.value) }
        Task { statusAnswer.set(try? await status.value) }
        try await waitUntil("both answered") { cancelAnswer.reply != nil && statusAnswer.reply != nil }
        #expect(statusAnswer.reply?.status == .progress)
        #expect(cancelAnswer.reply?.errorCode == "cancelled")
    }
}

/// A reply handed from one task to another.
final class Answer: Sendable {
    private let value = Mutex<Reply?>(nil)
    func set(_ reply: Reply?) { value.withLock { $0 = reply } }
    var reply: Reply? { value.withLock { $0 } }
}
