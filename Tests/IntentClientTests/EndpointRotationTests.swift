import IntentWire
import Testing

/// The rules that move a client to the next broker endpoint (``EndpointRotation``), without sockets.
@Suite struct EndpointRotationTests {
    static let second: UInt64 = 1_000_000_000

    func rotation(_ endpoints: [String] = ["a", "b", "c"]) -> EndpointRotation {
        EndpointRotation(endpoints: endpoints, handshakeWindow: Self.second)
    }

    @Test func aConnectionWithoutHandshakeWithinTheWindowMovesOn() {
        var rotation = rotation()
        rotation.awaitHandshake(from: 10 * Self.second)
        #expect(rotation.current == "a")
        #expect(rotation.moveDeadline == 11 * Self.second)
        #expect(!rotation.handshakeOverdue(at: 11 * Self.second - 1))
        #expect(rotation.handshakeOverdue(at: 11 * Self.second))
    }

    @Test func aHandshakeStopsTheClockAndADropStartsItAgain() {
        var rotation = rotation()
        rotation.awaitHandshake(from: 0)
        rotation.handshakeSucceeded()
        #expect(rotation.moveDeadline == nil)
        #expect(!rotation.handshakeOverdue(at: 100 * Self.second))
        rotation.awaitHandshake(from: 50 * Self.second)  // the connection dropped
        // A new socket to the same endpoint after the drop does not restart the window.
        rotation.awaitHandshake(from: 50 * Self.second + 500_000_000)
        #expect(rotation.moveDeadline == 51 * Self.second)
        rotation.handshakeSucceeded()  // the broker came back in time
        #expect(!rotation.handshakeOverdue(at: 60 * Self.second))
    }

    @Test func movesRoundRobinForever() {
        var rotation = rotation()
        var seen: [String] = []
        for _ in 0..<7 { seen.append(rotation.advance()) }
        #expect(seen == ["b", "c", "a", "b", "c", "a", "b"])
        #expect(rotation.moves == 7)
        // After a move, the window starts when the new socket is made.
        #expect(rotation.moveDeadline == nil)
        rotation.awaitHandshake(from: 3 * Self.second)
        #expect(rotation.moveDeadline == 4 * Self.second)
    }

    @Test func oneEndpointNeverMovesForAMissingHandshake() {
        var rotation = rotation(["only"])
        rotation.awaitHandshake(from: 0)
        #expect(!rotation.rotates)
        #expect(rotation.moveDeadline == nil)
        #expect(!rotation.handshakeOverdue(at: 1000 * Self.second))
        // Silence still makes a new socket, to the same endpoint.
        #expect(rotation.advance() == "only")
    }
}
