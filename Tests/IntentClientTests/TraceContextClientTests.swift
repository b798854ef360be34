import ConciergeJSON
import IntentClient
import IntentWire
import Testing

/// The client's trace context (PROTOCOL.md 4.2, 4.11.1; Docs/TRACING.md) against a scripted broker: a request or a
/// turn given a `traceContext` goes out in `CIPC04` with it in F8/F9, every retry carries the same, and without one
/// (and without a traced task: no instrument is bootstrapped in tests) it goes out as before.
@Suite struct TraceContextClientTests {
    static let trace = try! TraceContext(
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=opaque")
    static let intent: JSONValue = ["type": "Echo", "parameters": ["text": "hi"]]

    func client(_ broker: ScriptedBroker) throws -> ConciergeClient {
        try ConciergeClient(configuration: .init(brokerEndpoint: broker.endpoint, heartbeatInterval: .seconds(5)))
    }

    static func text(_ frames: [[UInt8]]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }

    /// A `CIPC04` REPLY to request `id`.
    static func reply(_ broker: ScriptedBroker, _ id: [UInt8], status: StaticString, body: String) {
        broker.send([
            CIP.clientSignatureV4.bytes, CIP.Broker.reply.bytes, id, status.bytes, Array("handle".utf8),
            Array(body.utf8), [],
        ])
    }

    @Test func anExplicitTraceContextGoesOutInCIPC04AndEveryRetryCarriesIt() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let call = Task {
            try await client.request(
                intent: Self.intent, retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1)),
                traceContext: Self.trace)
        }
        let first = try await broker.waitFor(CIP.Client.request)[0]
        #expect(first.count == 10)
        #expect(Array(Self.text(first).prefix(2)) == ["CIPC04", "REQUEST"])
        #expect(Array(Self.text(first).suffix(2)) == [Self.trace.traceparent, "vendor=opaque"])
        #expect(!first[7].isEmpty, "a retry policy adds a key (F7)")
        Self.reply(broker, first[2], status: CIP.Status.error, body: #"{"code":"busy","message":"scripted"}"#)
        let second = try await broker.waitFor(CIP.Client.request, count: 2)[1]
        #expect(second.count == 10 && second[2] != first[2])
        #expect(Array(Self.text(second).suffix(2)) == [Self.trace.traceparent, "vendor=opaque"])
        Self.reply(broker, second[2], status: CIP.Status.final, body: #"{"intent":{"type":"Echo"}}"#)
        let reply = try await call.value
        #expect(reply.status == .final && reply.attempts == 2)
    }

    @Test func withoutATraceContextARequestGoesOutAsBefore() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        #expect(ConciergeClient.outgoingTraceContext() == nil)
        #expect(ConciergeClient.outgoingTraceContext(Self.trace) == Self.trace)
        let call = Task { try await client.request(intent: Self.intent) }
        let request = try await broker.waitFor(CIP.Client.request)[0]
        #expect(request.count == 7 && Self.text(request).first == "CIPC01")
        broker.send([
            CIP.clientSignature.bytes, CIP.Broker.reply.bytes, request[2], CIP.Status.final.bytes,
            Array("handle".utf8), Array(#"{"intent":{"type":"Echo"}}"#.utf8),
        ])
        #expect(try await call.value.status == .final)
    }

    @Test func aTracedTurnGoesOutInCIPC04() async throws {
        let broker = try ScriptedBroker()
        defer { broker.stop() }
        let client = try client(broker)
        defer { client.close() }
        let start = Task {
            try await client.startConversation(intent: Self.intent, id: "c-1", traceContext: Self.trace)
        }
        let turn = try await broker.waitFor(CIP.Client.turn)[0]
        #expect(turn.count == 10)
        let text = Self.text(turn)
        #expect(Array(text.prefix(2)) == ["CIPC04", "TURN"] && text[3] == "c-1" && text[4] == "1")
        #expect(Array(text.suffix(2)) == [Self.trace.traceparent, "vendor=opaque"])
        // Only what goes out is under test: the turn's answer does not matter here.
        start.cancel()
        _ = try? await start.value
    }
}
