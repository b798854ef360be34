import Synchronization
import Testing
import ZeroMQ

/// CURVE in the binding: Z85, key pairs, the socket options, and the socket monitor's handshake events, against
/// real libzmq sockets on loopback TCP.
@Suite struct CurveBindingTests {
    let context = ZMQContext()

    @Test func z85MatchesTheRFC32TestVector() throws {
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(Z85.encode(bytes) == "HelloWorld")
        #expect(Z85.decode("HelloWorld") == bytes)
        #expect(Z85.encode([1, 2, 3]) == nil)
        #expect(Z85.decode("Hello") != nil)
        #expect(Z85.decode("Hell") == nil)
        #expect(Z85.decode("Hello Worl") == nil)
        #expect(Z85.decode("") == nil)
    }

    @Test func generatedKeyPairsAreDistinctAndTheirPublicKeyDerivesFromTheSecret() throws {
        #expect(ZMQContext.has("curve"))
        let first = try CurveKeyPair.generate()
        let second = try CurveKeyPair.generate()
        #expect(first.publicKey != second.publicKey)
        #expect(first.publicKey.z85.utf8.count == 40)
        #expect(try first.secretKey.publicKey() == first.publicKey)
        #expect(try CurvePublicKey(z85: first.publicKey.z85) == first.publicKey)
        #expect(try CurveSecretKey(z85: first.secretKey.z85) == first.secretKey)
        // Secret keys never print themselves.
        #expect(!"\(first.secretKey)".contains(first.secretKey.z85))
    }

    @Test func malformedKeyTextIsRejectedWithItsCode() throws {
        let valid = try CurveKeyPair.generate().publicKey.z85
        for text in [String(valid.dropLast()), valid + "0", String(valid.dropLast()) + "\"", ""] {
            let error = #expect(throws: CurveKeyError.self) { try CurvePublicKey(z85: text) }
            #expect(error?.code == .malformedKey)
        }
        #expect(throws: CurveKeyError.self) { try CurveSecretKey(bytes: [UInt8](repeating: 0, count: 31)) }
    }

    /// A ZAP handler for one test: answers `status` to `count` requests on a thread of its own (started at once,
    /// not on the test's cooperative pool, which the blocking waits below may occupy), then closes its socket.
    final class ZAPResponder: Sendable {
        let requests = Mutex<[[[UInt8]]]>([])

        init(context: ZMQContext, status: String, count: Int) throws {
            let socket = try ZMQSocket(context: context, type: .rep)
            try socket.setOption(.receiveTimeout, 5000)
            try socket.bind("inproc://zeromq.zap.01")
            SocketThread.start(name: "test-zap") { [self] in
                for _ in 0..<count {
                    guard let request = try? socket.receiveMultipart(dontWait: false), request.count >= 2 else {
                        break
                    }
                    self.requests.withLock { $0.append(request) }
                    _ = try? socket.send(
                        multipart: [
                            Array("1.0".utf8), request[1], Array(status.utf8), Array("test".utf8), Array("user".utf8),
                            [],
                        ],
                        dontWait: false
                    )
                }
                socket.close()
            }
        }
    }

    func curvePair(
        server: CurveKeyPair,
        client: CurveClientKeys?
    ) throws -> (router: ZMQSocket, dealer: ZMQSocket, monitor: ZMQSocketMonitor) {
        let router = try ZMQSocket(context: context, type: .router)
        try router.makeCurveServer(secretKey: server.secretKey, zapDomain: "test-domain")
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try ZMQSocket(context: context, type: .dealer)
        if let client { try dealer.makeCurveClient(client) }
        try dealer.setOption(.routingID, string: "d1")
        let monitor = try ZMQSocketMonitor(context: context, watching: dealer, events: .all)
        try dealer.connect(router.lastEndpoint)
        return (router, dealer, monitor)
    }

    @Test func curveHandshakeAsksZAPAndCarriesMessagesWhenAdmitted() throws {
        let zap = try ZAPResponder(context: context, status: "200", count: 1)
        let server = try CurveKeyPair.generate()
        let client = CurveClientKeys(serverKey: server.publicKey, keyPair: try .generate())
        let (router, dealer, monitor) = try curvePair(server: server, client: client)
        #expect(router.mechanism == .curve)
        #expect(dealer.mechanism == .curve)
        #expect(try dealer.bytesOption(.curvePublicKey, capacity: 32) == client.keyPair.publicKey.bytes)
        #expect(try dealer.bytesOption(.curveServerKey, capacity: 32) == server.publicKey.bytes)

        let event = try monitor.next(.handshakeSucceeded.union(.handshakeFailures), timeoutMilliseconds: 5000)
        #expect(event?.kind == .handshakeSucceeded)
        try dealer.send("hello", dontWait: false)
        try router.setOption(.receiveTimeout, 5000)
        #expect(try router.receiveMultipart(dontWait: false) == [Array("d1".utf8), Array("hello".utf8)])

        // RFC 27: version, request id, domain, address, identity, mechanism, credentials (the client's key).
        let request = try #require(zap.requests.withLock { $0.first })
        #expect(request.count == 7)
        #expect(request[0] == Array("1.0".utf8))
        #expect(request[2] == Array("test-domain".utf8))
        #expect(request[5] == Array("CURVE".utf8))
        #expect(request[6] == client.keyPair.publicKey.bytes)
    }

    @Test func aZAPRefusalShowsAsAnAuthenticationFailureOnTheClient() throws {
        let zap = try ZAPResponder(context: context, status: "400", count: 1)
        let server = try CurveKeyPair.generate()
        let client = CurveClientKeys(serverKey: server.publicKey, keyPair: try .generate())
        let (router, dealer, monitor) = try curvePair(server: server, client: client)
        _ = try dealer.send("let me in")
        let event = try monitor.next(.handshakeSucceeded.union(.handshakeFailures), timeoutMilliseconds: 5000)
        #expect(event?.kind == .handshakeFailedAuth)
        #expect(event?.value == 400)
        #expect(zap.requests.withLock { $0.count } == 1)
        #expect(try router.receiveMultipart(dontWait: true) == nil)
    }

    @Test func aClientWithoutCurveCannotTalkToACurveServer() throws {
        let server = try CurveKeyPair.generate()
        let (router, dealer, monitor) = try curvePair(server: server, client: nil)
        #expect(dealer.mechanism == .null)
        _ = try dealer.send("plain text")  // never wait: the connection may be gone already
        let event = try monitor.next(.handshakeSucceeded.union(.handshakeFailures), timeoutMilliseconds: 5000)
        #expect(event?.kind == .handshakeFailedProtocol)
        #expect(try router.receiveMultipart(dontWait: true) == nil)
    }

    @Test func optionsAcceptZ85TextAsWellAsRawBytes() throws {
        let pair = try CurveKeyPair.generate()
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.setOption(.curvePublicKey, string: pair.publicKey.z85)
        #expect(try socket.bytesOption(.curvePublicKey, capacity: 32) == pair.publicKey.bytes)
        #expect(throws: ZMQError.self) { try socket.setOption(.curvePublicKey, string: "too short") }
    }
}
