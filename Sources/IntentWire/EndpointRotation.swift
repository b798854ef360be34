/// Which of its broker endpoints a client or worker is connected to, and when it moves to the next one (PROTOCOL.md
/// 7.3; the ZeroMQ guide's Binary Star client: connected to one endpoint at a time, round-robin forever).
///
/// Only the active broker binds its sockets, so a connection to a standby never completes a handshake. A peer
/// moves on when its connection has not completed a handshake within ``handshakeWindow`` of the socket being made
/// or of the connection dropping (rule a). The other reasons to move — the broker silent for `heartbeatLiveness`
/// intervals (rule b), for a client a reply with error `unavailable` (rule c) — are decided by the loop, which then calls
/// ``advance()``. With one endpoint, rule a never moves (libzmq reconnects by itself); the others make a new
/// socket to the same endpoint.
///
/// Times are ``MonotonicTime`` nanoseconds; the type does no I/O, so its rules are tested without sockets.
public struct EndpointRotation: Sendable, Equatable {
    /// The endpoints in the order given (at least one).
    public let endpoints: [String]
    /// How long a connection gets to complete its handshake before the peer moves on (one heartbeat interval).
    public let handshakeWindow: UInt64
    /// The index of the endpoint in use.
    public private(set) var index = 0
    /// Since when the current socket has been without a completed handshake (made, or its connection dropped);
    /// nil while it has one.
    public private(set) var waitingSince: UInt64?
    /// How many times the peer moved.
    public private(set) var moves = 0

    /// A rotation over `endpoints` (an empty list is taken as one empty endpoint, which libzmq refuses), starting
    /// with the first, before its socket is made.
    public init(endpoints: [String], handshakeWindow: UInt64) {
        self.endpoints = endpoints.isEmpty ? [""] : endpoints
        self.handshakeWindow = handshakeWindow
    }

    /// The endpoint in use.
    public var current: String { endpoints[index] }

    /// Whether there is another endpoint to move to.
    public var rotates: Bool { endpoints.count > 1 }

    /// A socket was made, or its connection dropped (the monitor's `disconnected`): the handshake window starts,
    /// unless one is running already.
    public mutating func awaitHandshake(from now: UInt64) {
        if waitingSince == nil { waitingSince = now }
    }

    /// A handshake succeeded on the current socket.
    public mutating func handshakeSucceeded() {
        waitingSince = nil
    }

    /// When rule a moves the peer if nothing happens first (nil: it will not).
    public var moveDeadline: UInt64? {
        guard rotates, let waitingSince else { return nil }
        return waitingSince + handshakeWindow
    }

    /// Whether rule a says to move now: several endpoints, and no handshake within the window.
    public func handshakeOverdue(at now: UInt64) -> Bool {
        guard let deadline = moveDeadline else { return false }
        return now >= deadline
    }

    /// Moves to the next endpoint (the same one when there is only one) and returns it: the caller makes a new
    /// socket to it, and starts its handshake window with ``awaitHandshake(from:)``.
    @discardableResult
    public mutating func advance() -> String {
        index = (index + 1) % endpoints.count
        waitingSince = nil
        moves += 1
        return current
    }
}
