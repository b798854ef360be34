import CZeroMQ

/// A libzmq socket option (`ZMQ_*` for `zmq_setsockopt`/`zmq_getsockopt`).
public struct ZMQSocketOption: Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Milliseconds pending outgoing messages are kept after close (Concierge sets 0).
    public static let linger = ZMQSocketOption(rawValue: ZMQ_LINGER)
    /// The identity a DEALER presents to a ROUTER.
    public static let routingID = ZMQSocketOption(rawValue: ZMQ_ROUTING_ID)
    /// ROUTER: fail with `EHOSTUNREACH` instead of silently dropping messages to unknown peers.
    public static let routerMandatory = ZMQSocketOption(rawValue: ZMQ_ROUTER_MANDATORY)
    /// ROUTER: a new connection with a routing id already in use takes it over.
    public static let routerHandover = ZMQSocketOption(rawValue: ZMQ_ROUTER_HANDOVER)
    public static let sendHighWaterMark = ZMQSocketOption(rawValue: ZMQ_SNDHWM)
    public static let receiveHighWaterMark = ZMQSocketOption(rawValue: ZMQ_RCVHWM)
    /// Largest inbound message libzmq accepts (Int64); larger ones disconnect the peer.
    public static let maxMessageSize = ZMQSocketOption(rawValue: ZMQ_MAXMSGSIZE)
    /// Queue messages only to completed connections.
    public static let immediate = ZMQSocketOption(rawValue: ZMQ_IMMEDIATE)
    public static let reconnectInterval = ZMQSocketOption(rawValue: ZMQ_RECONNECT_IVL)
    public static let reconnectIntervalMax = ZMQSocketOption(rawValue: ZMQ_RECONNECT_IVL_MAX)
    public static let receiveTimeout = ZMQSocketOption(rawValue: ZMQ_RCVTIMEO)
    public static let sendTimeout = ZMQSocketOption(rawValue: ZMQ_SNDTIMEO)
    public static let lastEndpoint = ZMQSocketOption(rawValue: ZMQ_LAST_ENDPOINT)
    public static let receiveMore = ZMQSocketOption(rawValue: ZMQ_RCVMORE)
    public static let events = ZMQSocketOption(rawValue: ZMQ_EVENTS)
    /// The file descriptor that signals the socket's readiness may have changed (read only): see
    /// ``ZMQSocket/readinessFileDescriptor``.
    public static let fileDescriptor = ZMQSocketOption(rawValue: ZMQ_FD)
    /// ZMTP heartbeats (RFC 37): milliseconds between PINGs on each connection made after it is set (0: none).
    public static let heartbeatInterval = ZMQSocketOption(rawValue: ZMQ_HEARTBEAT_IVL)
    /// ZMTP heartbeats: milliseconds without any traffic after a PING before libzmq closes the connection.
    public static let heartbeatTimeout = ZMQSocketOption(rawValue: ZMQ_HEARTBEAT_TIMEOUT)
}

extension ZMQSocketOption {
    /// 1: this socket is a CURVE server (needs ``curveSecretKey``; clients are authenticated through ZAP).
    public static let curveServer = ZMQSocketOption(rawValue: ZMQ_CURVE_SERVER)
    /// The socket's own long-term CURVE public key (32 bytes, or 40 characters of Z85).
    public static let curvePublicKey = ZMQSocketOption(rawValue: ZMQ_CURVE_PUBLICKEY)
    /// The socket's own long-term CURVE secret key (32 bytes, or 40 characters of Z85).
    public static let curveSecretKey = ZMQSocketOption(rawValue: ZMQ_CURVE_SECRETKEY)
    /// Client: the server's CURVE public key (32 bytes, or 40 characters of Z85); makes the socket a CURVE client.
    public static let curveServerKey = ZMQSocketOption(rawValue: ZMQ_CURVE_SERVERKEY)
    /// The ZAP domain sent with this socket's authentication requests (RFC 27/ZAP).
    public static let zapDomain = ZMQSocketOption(rawValue: ZMQ_ZAP_DOMAIN)
    /// The security mechanism in use (read only): see ``ZMQSocket/mechanism``.
    public static let mechanism = ZMQSocketOption(rawValue: ZMQ_MECHANISM)
}
