import IntentWire
import Testing

/// ``EndpointSyntax``: what a ZeroMQ endpoint flag accepts before anything binds or connects.
@Suite struct EndpointSyntaxTests {
    @Test func acceptsTheThreeTransportsInTheirUsualShapes() throws {
        for endpoint in [
            "tcp://127.0.0.1:5555", "tcp://localhost:0", "tcp://*:5556", "tcp://127.0.0.1:*", "tcp://[::1]:5555",
            "tcp://eth0:5555", "tcp://192.168.1.2;10.0.0.1:5555", "ipc:///tmp/concierge/frontend", "ipc://@abstract",
            "inproc://broker",
        ] {
            #expect(throws: Never.self, "\(endpoint)") { try EndpointSyntax.check(endpoint) }
        }
    }

    @Test func refusesAnAddressWithoutTransportSayingWhatAValidOneLooksLike() throws {
        let error = try #require(throws: EndpointSyntaxError.self) { try EndpointSyntax.check("127.0.0.1:7655") }
        #expect(error.code == .malformedEndpoint)
        #expect(error.endpoint == "127.0.0.1:7655")
        #expect(error.message.contains("\"127.0.0.1:7655\" is not a valid endpoint"))
        #expect(error.message.contains("tcp://HOST:PORT, ipc://PATH or inproc://NAME"))
        #expect(error.description.hasPrefix("malformed-endpoint: "))
    }

    @Test func refusesMalformedEndpoints() {
        for endpoint in [
            "", "localhost", "tcp://", "tcp://127.0.0.1", "tcp://:5555", "tcp://127.0.0.1:", "tcp://127.0.0.1:65536",
            "tcp://127.0.0.1:-1", "tcp://127.0.0.1:55x", "tcp://::1:5555", "ipc://", "inproc://", "udp://1.2.3.4:5",
            "TCP//127.0.0.1:5555",
        ] {
            #expect(throws: EndpointSyntaxError.self, "\(endpoint)") { try EndpointSyntax.check(endpoint) }
        }
    }
}
