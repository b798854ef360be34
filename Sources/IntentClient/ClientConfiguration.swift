public import IntentWire
public import ZeroMQ

/// Everything a ``ConciergeClient`` can be told.
public struct ClientConfiguration: Sendable {
    /// The brokers' frontend endpoints (at least one). With several — brokers sharing one PostgreSQL journal, one
    /// of them active — the client is connected to one at a time and follows the active one: it moves to the next
    /// endpoint (round-robin, forever) when its connection does not complete a handshake within one heartbeat
    /// interval (a standby binds nothing), when the broker is silent for ``heartbeatLiveness`` intervals, or when a
    /// reply is the error `unavailable`. Requests in flight are kept across moves (see ``reconnectTimeout``).
    public var brokerEndpoints: [String]
    /// The first of ``brokerEndpoints``; setting it replaces the list with this one endpoint.
    public var brokerEndpoint: String {
        get { brokerEndpoints.first ?? "" }
        set { brokerEndpoints = [newValue] }
    }
    /// The connection's routing id. A stable one lets a reconnected client ask STATUS about requests it sent
    /// before (the broker keys requests by routing id and request id), on the same broker or on the one that took
    /// over. Defaults to a random one per client.
    public var routingID: String
    /// How often the client pings a quiet broker; also how long a connection gets to complete its handshake before
    /// the client moves to the next endpoint.
    public var heartbeatInterval: Duration
    /// The broker is considered lost after this many silent intervals: the client then reconnects (to the next
    /// endpoint if it has several, else to the same one) and keeps the requests in flight (see
    /// ``reconnectTimeout``).
    public var heartbeatLiveness: Int
    /// How long requests in flight wait for a broker to answer again after the connection dropped or the broker
    /// went silent (counted from the first of these). When a broker answers within it (the same one restarted, or
    /// another that took over), the client asks it about every request in flight (STATUS): a request it recovered
    /// from its journal gets its final reply as usual. When none answers in time, the requests in flight fail with
    /// ``ClientError/Code/connectionLost`` (their results stay available to ``ConciergeClient/status(of:)`` once a
    /// broker is back). Default: 10 s.
    public var reconnectTimeout: Duration
    /// CURVE: the broker's public key and this client's key pair (its public key must be on the broker's client
    /// allowlist); nil: no encryption (only for brokers on loopback or `ipc://`). Every endpoint uses the same keys.
    public var curve: CurveClientKeys?
    /// Client-side adaptive throttling (``AdaptiveThrottle``), one throttle per intent type: when the broker refuses
    /// many of this client's requests of a type with `busy`, the client refuses a share of new ones itself, without
    /// sending them (``ClientError/Code/throttled``), and sends about ``AdaptiveThrottle/Configuration/multiplier``
    /// times what the broker accepts. This spares the broker (and this process) the work of receiving, refusing and
    /// answering requests it would shed anyway. nil (the default): every request is sent.
    public var throttle: AdaptiveThrottle.Configuration?
    /// Heeds the broker's pushback (``Pushback``, PROTOCOL.md 6.3), one per intent type: when the broker refuses a
    /// request with `busy` and a pushback rate, the client sends at most that rate of the type until the hint's time
    /// is up, and fails the rest at once, unsent, with ``ClientError/Code/throttled`` (which ``RetryPolicy``
    /// retries: nothing was sent). Shedding here costs nothing, where each request the broker refuses costs both
    /// sides a send, a receive and the broker a check. Default: true.
    public var heedsPushback: Bool = true

    /// A configuration for one broker endpoint.
    public init(
        brokerEndpoint: String = "tcp://127.0.0.1:5555",
        routingID: String? = nil,
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        reconnectTimeout: Duration = .seconds(10),
        curve: CurveClientKeys? = nil,
        throttle: AdaptiveThrottle.Configuration? = nil
    ) {
        self.init(
            brokerEndpoints: [brokerEndpoint], routingID: routingID, heartbeatInterval: heartbeatInterval,
            heartbeatLiveness: heartbeatLiveness, reconnectTimeout: reconnectTimeout, curve: curve, throttle: throttle)
    }

    /// A configuration for several broker endpoints (the active broker and its standbys, in any order).
    public init(
        brokerEndpoints: [String],
        routingID: String? = nil,
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        reconnectTimeout: Duration = .seconds(10),
        curve: CurveClientKeys? = nil,
        throttle: AdaptiveThrottle.Configuration? = nil
    ) {
        self.brokerEndpoints = brokerEndpoints
        self.routingID = routingID ?? "client-\(UInt64.random(in: 0...UInt64.max))"
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.reconnectTimeout = reconnectTimeout
        self.curve = curve
        self.throttle = throttle
    }
}
