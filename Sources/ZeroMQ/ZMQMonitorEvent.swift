import CZeroMQ

/// One event from a socket monitor (`zmq_socket_monitor`): what happened, its value, and on which endpoint.
public struct ZMQMonitorEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened (`ZMQ_EVENT_*`); also usable as a set of events to watch.
    public struct Kind: OptionSet, Sendable, Hashable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let connected = Kind(rawValue: ZMQ_EVENT_CONNECTED)
        public static let connectDelayed = Kind(rawValue: ZMQ_EVENT_CONNECT_DELAYED)
        public static let connectRetried = Kind(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
        public static let listening = Kind(rawValue: ZMQ_EVENT_LISTENING)
        public static let bindFailed = Kind(rawValue: ZMQ_EVENT_BIND_FAILED)
        public static let accepted = Kind(rawValue: ZMQ_EVENT_ACCEPTED)
        public static let acceptFailed = Kind(rawValue: ZMQ_EVENT_ACCEPT_FAILED)
        public static let closed = Kind(rawValue: ZMQ_EVENT_CLOSED)
        public static let closeFailed = Kind(rawValue: ZMQ_EVENT_CLOSE_FAILED)
        public static let disconnected = Kind(rawValue: ZMQ_EVENT_DISCONNECTED)
        public static let monitorStopped = Kind(rawValue: ZMQ_EVENT_MONITOR_STOPPED)
        /// The handshake failed for a reason other than the two below (value: `errno`).
        public static let handshakeFailedNoDetail = Kind(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        /// The security handshake succeeded (for a CURVE client: the broker admitted its key).
        public static let handshakeSucceeded = Kind(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        /// The peers disagreed on the protocol, e.g. a NULL client and a CURVE server (value:
        /// `ZMQ_PROTOCOL_ERROR_*`).
        public static let handshakeFailedProtocol = Kind(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        /// The server's ZAP handler refused the peer (value: the ZAP status code, e.g. 400).
        public static let handshakeFailedAuth = Kind(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        /// Every event.
        public static let all = Kind(rawValue: ZMQ_EVENT_ALL)
        /// The three handshake failures.
        public static let handshakeFailures: Kind = [
            .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuth,
        ]
    }

    public let kind: Kind
    /// The event's value: a file descriptor, an `errno`, a ZAP status or a protocol error, depending on ``kind``.
    public let value: UInt32
    /// The endpoint the event concerns.
    public let endpoint: String

    public init(kind: Kind, value: UInt32, endpoint: String) {
        self.kind = kind
        self.value = value
        self.endpoint = endpoint
    }

    /// For a handshake failure, what it most likely means; nil for other events, and for a connection that merely
    /// broke off (see below). `usingCurve` says whether the socket that failed is a CURVE client (the likely causes
    /// differ).
    ///
    /// `handshakeSucceededBefore` says whether this peer ever completed a handshake with the server. A connection
    /// that breaks off during the handshake (``Kind/handshakeFailedNoDetail``) after earlier ones succeeded is a
    /// server going away (killed, restarting), not a refusal: the answer is nil, and the caller reports the server
    /// as lost. Only when none ever succeeded does a plain peer hear that the server may require CURVE.
    public func handshakeFailureExplanation(usingCurve: Bool, handshakeSucceededBefore: Bool = false) -> String? {
        if kind == .handshakeFailedAuth {
            return "the server refused this peer's credentials (ZAP status \(value)): its CURVE public key is not on "
                + "the server's allowlist for this endpoint"
        }
        if kind == .handshakeFailedProtocol {
            if Int32(bitPattern: value) == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH {
                return usingCurve
                    ? "security mechanism mismatch: this peer uses CURVE and the server does not"
                    : "security mechanism mismatch: the server requires CURVE and this peer has no CURVE keys"
            }
            return "handshake protocol error 0x\(String(value, radix: 16))"
                + (usingCurve ? " (is the server key the server's public key?)" : "")
        }
        if kind == .handshakeFailedNoDetail {
            guard !handshakeSucceededBefore else { return nil }
            let reason = String(cString: zmq_strerror(Int32(bitPattern: value)))
            return "the server closed the connection during the handshake (\(reason)): "
                + (usingCurve
                    ? "is the server key the server's public key, and does the server use CURVE?"
                    : "the server is not answering (stopping or restarting), or it requires CURVE and this peer "
                        + "has no CURVE keys")
        }
        return nil
    }

    public var description: String {
        "ZMQMonitorEvent(0x\(String(kind.rawValue, radix: 16)), value: \(value), endpoint: \(endpoint))"
    }
}
