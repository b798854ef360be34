public import IntentWire
public import ZeroMQ

/// How a load run drives the broker: where, how hard, for how long.
public struct LoadConfiguration: Sendable {
    /// How requests are offered.
    public enum Mode: Sendable, Equatable {
        /// Closed loop: `concurrency` requests in flight at all times (a new one as each one ends).
        case closed(concurrency: Int)
        /// Open loop: a fixed arrival rate in requests per second, whatever the replies do. Latency is measured
        /// from each request's intended send time, so a stalled system cannot hide its queueing.
        case open(rate: Double)
    }

    /// The brokers' frontend endpoints (at least one): the active broker and its standbys. The run uses the first
    /// one whose broker answers PING within a second (a standby binds nothing), trying them in turn until
    /// ``connectTimeout``; it does not follow a failover during the run (requests in flight then end as they do at
    /// a broker restart).
    public var endpoints: [String]
    /// The first of ``endpoints``; setting it replaces the list with this one endpoint.
    public var endpoint: String {
        get { endpoints.first ?? "" }
        set { endpoints = [newValue] }
    }
    /// Closed or open loop.
    public var mode: Mode
    /// DEALER connections the requests are spread over.
    public var connections: Int
    /// How long requests are offered after the warm-up (the run ends earlier when ``requestCount`` is reached).
    public var duration: Duration?
    /// How many measured requests to send (after the warm-up); nil: as many as ``duration`` allows.
    public var requestCount: Int?
    /// Requests offered during the warm-up are sent but not counted.
    public var warmup: Duration
    /// The first-reply deadline sent with every request (the broker answers `progress` by then).
    public var deadlineMilliseconds: Int
    /// After the last request is offered, how long to wait for the outstanding ones before counting them
    /// `unanswered`.
    public var drainTimeout: Duration
    /// Open loop: most requests in flight at once; beyond it, due requests wait in the client (their latency,
    /// measured from the intended time, shows it) and are counted in ``LoadSummary/clientBacklogMax``.
    public var maxInFlight: Int
    /// How often the progress callback is called.
    public var progressInterval: Duration
    /// How long to wait for the broker's PONG before the run starts.
    public var connectTimeout: Duration
    /// CURVE: the broker's public key and the load client's key pair (on the broker's client allowlist); nil: none.
    public var curve: CurveClientKeys?
    /// Every request carries a fresh idempotency key (a `CIPC02` REQUEST with F7: this run's random prefix and the
    /// request's number), to measure what keys cost the broker (PROTOCOL.md 4.10.1).
    public var idempotencyKeys: Bool
    /// Client-side adaptive throttling, one throttle per intent type (``AdaptiveThrottle``): when the broker
    /// refuses many requests with `busy`, the client refuses a share of new ones itself, without sending them
    /// (outcome ``LoadOutcome/throttled``). nil (the default): every request is sent, so that the run measures the
    /// broker's own shedding.
    public var throttle: AdaptiveThrottle.Configuration?
    /// Open loop: heeds the broker's pushback (``Pushback``, PROTOCOL.md 6.3), per connection and intent type, as the
    /// client library does by default: after a `busy` refusal that carries a rate, a connection sends at most that
    /// rate of the type until the hint's time is up, and refuses the rest unsent (outcome ``LoadOutcome/throttled``).
    /// False: every request is sent, and the run measures the broker's own shedding. (A closed loop is bounded by
    /// its concurrency and sends every request.)
    public var heedsPushback: Bool

    public init(
        endpoint: String = "tcp://127.0.0.1:5555",
        mode: Mode = .closed(concurrency: 100),
        connections: Int = 4,
        duration: Duration? = .seconds(10),
        requestCount: Int? = nil,
        warmup: Duration = .seconds(1),
        deadlineMilliseconds: Int = 3000,
        drainTimeout: Duration = .seconds(10),
        maxInFlight: Int = 200_000,
        progressInterval: Duration = .seconds(1),
        connectTimeout: Duration = .seconds(5),
        curve: CurveClientKeys? = nil,
        idempotencyKeys: Bool = false,
        throttle: AdaptiveThrottle.Configuration? = nil,
        heedsPushback: Bool = true
    ) {
        self.endpoints = [endpoint]
        self.mode = mode
        self.connections = connections
        self.duration = duration
        self.requestCount = requestCount
        self.warmup = warmup
        self.deadlineMilliseconds = deadlineMilliseconds
        self.drainTimeout = drainTimeout
        self.maxInFlight = maxInFlight
        self.progressInterval = progressInterval
        self.connectTimeout = connectTimeout
        self.curve = curve
        self.idempotencyKeys = idempotencyKeys
        self.throttle = throttle
        self.heedsPushback = heedsPushback
    }

    /// Checks the values against each other; throws ``LoadError/Code/badConfiguration``.
    public func validate() throws(LoadError) {
        func fail(_ message: String) -> LoadError { LoadError(code: .badConfiguration, message: message) }
        switch mode {
        case .closed(let concurrency):
            guard concurrency >= 1 else { throw fail("concurrency must be at least 1") }
            guard connections <= concurrency else {
                throw fail("connections (\(connections)) must not exceed concurrency (\(concurrency))")
            }
        case .open(let rate):
            guard rate > 0, rate.isFinite, rate <= 10_000_000 else {
                throw fail("rate must be above 0 and at most 10,000,000 requests per second")
            }
        }
        guard !endpoints.isEmpty, !endpoints.contains(where: \.isEmpty) else { throw fail("give broker endpoints") }
        guard connections >= 1, connections <= 1024 else { throw fail("connections must be 1 to 1024") }
        guard duration != nil || requestCount != nil else { throw fail("give a duration or a request count") }
        if let duration, duration <= .zero { throw fail("duration must be positive") }
        if let requestCount, requestCount < 1 { throw fail("the request count must be at least 1") }
        guard (10...60_000).contains(deadlineMilliseconds) else {
            throw fail("the deadline must be 10 to 60000 ms")
        }
        guard maxInFlight >= 1 else { throw fail("max in flight must be at least 1") }
        guard warmup >= .zero, drainTimeout >= .zero else {
            throw fail("warm-up and drain timeout must not be negative")
        }
    }
}
