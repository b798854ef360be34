import Testing
import ZeroMQ

@testable import IntentBroker

/// The broker loop's routing-id cache: a known peer's id is the array kept for it, never another peer's.
@Suite struct RoutingIDCacheTests {
    /// Messages from `peers` DEALERs (routing ids `names`) to one ROUTER, received in `order`; calls `body` with each
    /// received message.
    static func receive(
        names: [String], order: [Int], _ body: (Int, borrowing ZMQMultipart) throws -> Void
    ) throws {
        let context = ZMQContext()
        defer { context.terminate() }
        let router = try ZMQSocket(context: context, type: .router)
        try router.bind("inproc://routing-id-cache")
        var dealers: [ZMQSocket] = []
        for name in names {
            let dealer = try ZMQSocket(context: context, type: .dealer)
            try dealer.setOption(.routingID, bytes: Array(name.utf8))
            try dealer.connect("inproc://routing-id-cache")
            dealers.append(dealer)
        }
        var buffer = ZMQMultipart(capacity: 4)
        var poller = ZMQPoller()
        poller.add(router)
        for peer in order {
            try dealers[peer].send("x", dontWait: false)
            _ = try poller.poll(timeoutMilliseconds: 5000)
            let received = try router.receive(into: &buffer)
            #expect(received)
            try body(peer, buffer)
        }
        for dealer in dealers { dealer.close() }
        router.close()
    }

    static func address(_ id: [UInt8]) -> UnsafeRawPointer? { id.withUnsafeBytes { $0.baseAddress } }

    @Test func aKnownPeerGetsTheArrayKeptForIt() throws {
        var cache = RoutingIDCache(capacity: 4)
        var first: [Int: [UInt8]] = [:]
        try Self.receive(names: ["client-a", "client-b", "w"], order: [0, 1, 2, 0, 1, 2, 2, 0]) { peer, message in
            let id = cache.bytes(message, frame: 0)
            #expect(id == message.bytes(0))
            if let kept = first[peer] {
                #expect(Self.address(id) == Self.address(kept), "peer \(peer) got a new copy")
            } else {
                first[peer] = id
            }
        }
        #expect(Set(first.values.map { String(decoding: $0, as: UTF8.self) }) == ["client-a", "client-b", "w"])
    }

    @Test func morePeersThanSlotsStillGetTheirOwnIds() throws {
        var cache = RoutingIDCache(capacity: 2)
        let names = ["p0", "p1", "p2", "a-longer-peer-name", "p"]
        let order = (0..<60).map { ($0 * 7 + $0 / 5) % names.count }
        try Self.receive(names: names, order: order) { peer, message in
            #expect(cache.bytes(message, frame: 0) == Array(names[peer].utf8))
        }
    }
}
