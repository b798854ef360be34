import IntentWire
import Testing
import ZeroMQ

/// Tests of the thin libzmq binding against real libzmq sockets over inproc and loopback TCP.
@Suite struct ZeroMQBindingTests {
    let context = ZMQContext()

    func routerDealerPair(routingID: String? = nil) throws -> (ZMQSocket, ZMQSocket) {
        let router = try ZMQSocket(context: context, type: .router)
        try router.setOption(.routerMandatory, 1)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try ZMQSocket(context: context, type: .dealer)
        if let routingID { try dealer.setOption(.routingID, string: routingID) }
        try dealer.connect(router.lastEndpoint)
        return (router, dealer)
    }

    /// Waits up to 2 s for a message on `socket`, then receives it into `buffer`.
    func receiveWaiting(_ socket: ZMQSocket, into buffer: inout ZMQMultipart) throws -> Bool {
        var poller = ZMQPoller()
        poller.add(socket)
        _ = try poller.poll(timeoutMilliseconds: 2000)
        return try socket.receive(into: &buffer)
    }

    @Test func multipartRoundTripKeepsFramesInOrder() throws {
        let (router, dealer) = try routerDealerPair(routingID: "client-1")
        #expect(try dealer.send(multipart: [Array("a".utf8), [], Array("third".utf8)], dontWait: false))
        let received = try #require(try router.receiveMultipart())
        #expect(received.count == 4)
        #expect(received[0] == Array("client-1".utf8))
        #expect(received[1] == Array("a".utf8))
        #expect(received[2] == [])
        #expect(received[3] == Array("third".utf8))
        try router.send(multipart: [received[0], Array("reply".utf8)])
        #expect(try dealer.receiveMultipart() == [Array("reply".utf8)])
    }

    @Test(arguments: [0, 7, 10, 1250, UInt64.max])
    func decimalFramesAreTheNumbersDigits(value: UInt64) throws {
        let (router, dealer) = try routerDealerPair(routingID: "client-1")
        var sink = ZMQWaitingSink(dealer)  // the codec's decimal frames, as the broker sends them
        #expect(try sink.append(decimal: value, more: true))
        #expect(try sink.append(decimal: value, more: false))
        let received = try #require(try router.receiveMultipart())
        #expect(received.dropFirst() == [Array(String(value).utf8), Array(String(value).utf8)])
    }

    @Test func receiveWithoutWaitingReportsNothingWaiting() throws {
        let (_, dealer) = try routerDealerPair()
        var buffer = ZMQMultipart(capacity: 4)
        let got = try dealer.receive(into: &buffer, dontWait: true)
        #expect(got == false)
        let count = buffer.count
        #expect(count == 0)
    }

    @Test func routerMandatoryReportsUnknownPeer() throws {
        let (router, _) = try routerDealerPair()
        #expect(throws: ZMQError.hostUnreachable) {
            try router.send(Array("nobody".utf8), more: true)
        }
    }

    /// A router with `handover`, a first peer "worker-7" whose "one" it received, and a second peer with the same
    /// id that connected (while the first is still connected) and sent "two".
    func twoPeersWithOneID(handover: Int32) throws -> (router: ZMQSocket, first: ZMQSocket, second: ZMQSocket) {
        let router = try ZMQSocket(context: context, type: .router)
        try router.setOption(.routerHandover, handover)
        try router.setOption(.routerMandatory, 1)
        try router.bind("tcp://127.0.0.1:*")
        let first = try ZMQSocket(context: context, type: .dealer)
        try first.setOption(.routingID, string: "worker-7")
        try first.connect(router.lastEndpoint)
        try first.send("one", dontWait: false)
        #expect(try router.receiveMultipart()?[1] == Array("one".utf8))
        let second = try ZMQSocket(context: context, type: .dealer)
        try second.setOption(.routingID, string: "worker-7")
        try second.connect(router.lastEndpoint)
        try second.send("two", dontWait: false)
        return (router, first, second)
    }

    @Test func routerHandoverLetsANewPeerTakeOverARoutingID() throws {
        // A restarted peer reusing the id while the old connection is still open.
        let (router, _, second) = try twoPeersWithOneID(handover: 1)
        #expect(try router.receiveMultipart()?[1] == Array("two".utf8))
        try router.send(multipart: [Array("worker-7".utf8), Array("to-new".utf8)], dontWait: false)
        #expect(try second.receiveMultipart() == [Array("to-new".utf8)])
    }

    /// Without handover (what the broker does under a permissions file), a second connection with a live routing id
    /// is never given it: the router reads nothing from it and delivers nothing to it; the first keeps the id.
    @Test func withoutHandoverASecondConnectionNeverGetsALiveRoutingID() throws {
        let (router, first, second) = try twoPeersWithOneID(handover: 0)
        // The first connection's next message arrives, the second's never does (libzmq keeps order per connection,
        // and the router takes turns between connections: "two" would have come first or next).
        try first.send("three", dontWait: false)
        var buffer = ZMQMultipart(capacity: 4)
        #expect(try receiveWaiting(router, into: &buffer))
        #expect(buffer.string(1) == "three")
        #expect(try router.receiveMultipart(dontWait: true) == nil)
        try router.send(multipart: [Array("worker-7".utf8), Array("to-owner".utf8)], dontWait: false)
        #expect(try receiveWaiting(first, into: &buffer) && buffer.string(0) == "to-owner")
        #expect(try second.receiveMultipart(dontWait: true) == nil)
    }

    /// The ZMTP heartbeat options (RFC 37) the broker sets under CURVE read back as set.
    @Test func zmtpHeartbeatOptionsAreSet() throws {
        let router = try ZMQSocket(context: context, type: .router)
        try router.setOption(.heartbeatInterval, 250)
        try router.setOption(.heartbeatTimeout, 750)
        #expect(try router.intOption(.heartbeatInterval) == 250)
        #expect(try router.intOption(.heartbeatTimeout) == 750)
    }

    @Test func sendingAMessageLeavesItIntactForResending() throws {
        let (router, dealer) = try routerDealerPair(routingID: "d")
        let big = try ZMQMessage.copying([UInt8](repeating: 7, count: 10_000))
        try dealer.send(big, dontWait: false)
        try dealer.send(big, dontWait: false)
        #expect(big.count == 10_000)
        #expect(try router.receiveMultipart()?[1].count == 10_000)
        #expect(try router.receiveMultipart()?[1] == [UInt8](repeating: 7, count: 10_000))
    }

    @Test func takenFramesOutliveTheReceiveBuffer() throws {
        let (router, dealer) = try routerDealerPair(routingID: "d")
        try dealer.send(multipart: [Array("head".utf8), Array("body-bytes".utf8)])
        var buffer = ZMQMultipart(capacity: 4)
        let received = try receiveWaiting(router, into: &buffer)
        #expect(received)
        let body = buffer.take(2)
        let isHead = buffer.equals(1, "head")
        #expect(isHead)
        try dealer.send("again")
        let receivedAgain = try receiveWaiting(router, into: &buffer)
        #expect(receivedAgain)
        #expect(body.string == "body-bytes")
        let again = buffer.string(1)
        #expect(again == "again")
    }

    @Test func aCompactedFrameIsACopyInItsOwnAllocationAndTheSlotKeepsItsFrame() throws {
        let (router, dealer) = try routerDealerPair(routingID: "d")
        let payload = (0..<1000).map { UInt8($0 % 251) }
        try dealer.send(multipart: [Array("head".utf8), payload, Array("tail".utf8)])
        var buffer = ZMQMultipart(capacity: 4)
        let received = try receiveWaiting(router, into: &buffer)
        #expect(received)
        let copy = buffer.takeCompacted(2)
        #expect(copy.bytes == payload)
        // A copy, not the received frame: its bytes are elsewhere, and the slot still holds the frame.
        let slotAddress = buffer.withBytes(2) { $0.baseAddress }
        let copyAddress = copy.withUnsafeBytes { $0.baseAddress }
        #expect(slotAddress != copyAddress)
        let slotBytes = buffer.bytes(2)
        #expect(slotBytes == payload)
        let isTail = buffer.equals(3, "tail")
        #expect(isTail)
        // A taken frame moves out (the slot becomes empty); its message is intact after the next receive.
        let moved = buffer.take(2)
        #expect(moved.withUnsafeBytes { $0.baseAddress } == slotAddress)
        let emptied = buffer.size(2)
        #expect(emptied == 0)
        try dealer.send("again")
        let receivedAgain = try receiveWaiting(router, into: &buffer)
        #expect(receivedAgain)
        #expect(copy.bytes == payload)
        #expect(moved.bytes == payload)
    }

    @Test func messagesKeepTheirFramesInTheirOwnObject() throws {
        let empty = ZMQMessage.empty()
        #expect(empty.count == 0)
        // Small frames (up to 33 bytes) live inside the zmq_msg_t itself: its storage must stay put.
        let small = try ZMQMessage.copying(Array("small".utf8))
        let large = try ZMQMessage.copying([UInt8](repeating: 3, count: 5_000))
        #expect(small.string == "small")
        #expect(large.bytes == [UInt8](repeating: 3, count: 5_000))
        let compacted = small.compacted()
        #expect(compacted !== small)
        #expect(compacted.string == "small")
        let (router, dealer) = try routerDealerPair(routingID: "d")
        try dealer.send(small, more: true, dontWait: false)
        try dealer.send(large, dontWait: false)
        #expect(try router.receiveMultipart() == [Array("d".utf8), Array("small".utf8), large.bytes])
        #expect(small.string == "small")
    }

    @Test func framesBeyondCapacityAreCountedAsOverflow() throws {
        let (router, dealer) = try routerDealerPair()
        try dealer.send(multipart: (0..<6).map { [UInt8($0)] }, dontWait: false)
        var buffer = ZMQMultipart(capacity: 3)
        let receivedSix = try receiveWaiting(router, into: &buffer)
        #expect(receivedSix)
        let (kept, dropped) = (buffer.count, buffer.overflow)
        #expect(kept == 3)
        #expect(dropped == 4)
    }

    @Test func eventFDWakesAPoll() throws {
        let wake = EventFD()
        var poller = ZMQPoller()
        let index = poller.add(fileDescriptor: wake.fileDescriptor)
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
        wake.signal()
        wake.signal()
        #expect(try poller.poll(timeoutMilliseconds: 1000) == 1)
        #expect(poller.isReadable(index))
        wake.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
    }

    @Test func contextShutdownEndsBlockingReceive() throws {
        let context = ZMQContext()
        let socket = try ZMQSocket(context: context, type: .pull)
        try socket.bind("inproc://shutdown-test")
        context.shutdown()
        #expect(throws: ZMQError.terminated) { _ = try socket.receiveMultipart(dontWait: false) }
        socket.close()
        context.terminate()
    }

    @Test func libzmqHasCurveAndIPC() {
        #expect(ZMQContext.has("ipc"))
        #expect(ZMQContext.version.0 == 4)
    }
}
