import IntentClient
import IntentWire
import Synchronization
import Testing

/// ``ConciergeClient/send(intentType:phase:body:deadline:requestID:idempotencyKey:traceContext:handler:)`` (the
/// gateway's path: replies to a handler on the socket thread, no stream) and ``ConciergeClient/isConnected``, against a
/// scripted broker.
@Suite struct ReplyHandlerTests {
    static let body = Array(#"{"intent":{"type":"Echo","parameters":{"text":"hi"}}}"#.utf8)
    static let finalBody = #"{"intent":{"type":"Echo"},"handle":{"code":"success"}}"#

    /// What a handler heard, in order.
    final class Heard: Sendable {
        private let events = Mutex<[String]>([])
        func record(_ event: ReplyEvent) {
            let text: String =
                switch event {
                case .reply(let reply): "\(reply.status)"
                case .ended: "ended"
                case .failed(let error): "failed \(error.code.rawValue)"
                }
            events.withLock { $0.append(text) }
        }
        var all: [String] { events.withLock { $0 } }
    }

    /// A scripted broker, a client of it and what its handlers hear.
    static func connected() throws -> (ScriptedBroker, ConciergeClient, Heard) {
        let broker = try ScriptedBroker()
        return (broker, try ConciergeClient(configuration: .init(brokerEndpoint: broker.endpoint)), Heard())
    }

    @Test func theHandlerHearsProgressThenTheEndingThenEnded() async throws {
        let (broker, client, heard) = try Self.connected()
        defer {
            client.close()
            broker.stop()
        }
        let sent = client.send(
            intentType: "Echo", phase: .handle, body: Self.body, requestID: "h1", handler: { heard.record($0) })
        #expect(sent.id == "h1")
        let requests = try await broker.waitFor(CIP.Client.request)
        #expect(requests[0][2] == Array("h1".utf8))
        broker.reply(Array("h1".utf8), status: CIP.Status.progress, body: #"{"state":"running"}"#)
        broker.reply(Array("h1".utf8), status: CIP.Status.final, body: Self.finalBody)
        try await waitUntil("the ending") { heard.all.count == 3 }
        #expect(heard.all == ["progress", "final", "ended"])
    }

    @Test func abandonSendsCancelAndTheHandlerHearsNothingMore() async throws {
        let (broker, client, heard) = try Self.connected()
        defer {
            client.close()
            broker.stop()
        }
        let sent = client.send(
            intentType: "Echo", phase: .handle, body: Self.body, requestID: "h2", handler: { heard.record($0) })
        _ = try await broker.waitFor(CIP.Client.request)
        sent.abandon()
        let cancels = try await broker.waitFor(CIP.Client.cancel)
        #expect(cancels.map { $0[2] } == [Array("h2".utf8)])
        broker.replyError(Array("h2".utf8), code: .cancelled)
        // The PONG comes after the ending (the scripted broker sends what is queued first): handled by then.
        try await client.ping()
        #expect(heard.all.isEmpty)
    }

    @Test func isConnectedFollowsTheConnection() async throws {
        let broker = try ScriptedBroker()
        let client = try ConciergeClient(configuration: .init(brokerEndpoint: broker.endpoint))
        defer { client.close() }
        try await waitUntil("connected") { client.isConnected }
        broker.stop()
        try await waitUntil("the connection dropped") { !client.isConnected }
    }
}
