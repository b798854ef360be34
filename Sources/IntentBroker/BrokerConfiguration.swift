/// Everything a ``Broker`` can be told. Defaults are the production defaults, on loopback.
public struct BrokerConfiguration: Sendable {
    /// Where clients connect (ROUTER). Loopback by default.
    public var frontendEndpoint: String
    /// Where workers connect (ROUTER). Loopback by default.
    public var backendEndpoint: String
    /// First-reply deadline for requests that do not set one.
    public var defaultDeadline: Duration
    /// A request not finished by then ends with error `timeout`.
    public var hardLimit: Duration
    /// The broker acts on a deadline this much early — a tenth of the deadline, at most this — so that the first
    /// reply (progress, or busy for a shed request) reaches the client by its deadline despite timer resolution,
    /// a busy loop and the transport.
    public var maxReplyMargin: Duration
    /// How often the broker heartbeats workers (and expects to hear from them).
    public var heartbeatInterval: Duration
    /// A worker silent for this many heartbeat intervals is removed, busy or idle.
    public var heartbeatLiveness: Int
    /// How long a finished request's result stays available to STATUS queries.
    public var resultTTL: Duration
    /// The most finished results kept for STATUS queries.
    public var maxStoredResults: Int
    /// Largest request body accepted; larger ones get error `too-large`.
    public var maxBodySize: Int
    /// The most requests waiting for a worker (all intent types together); past it, error `busy`.
    public var maxQueuedRequests: Int
    /// After the last worker for an intent type goes away, requests for it wait this long for a new one
    /// (a pool restarting its workers) before they fail with `unknown-intent`.
    public var workerGracePeriod: Duration
    /// On shutdown, how long in-flight requests get to finish before they fail with `shutting-down`.
    public var shutdownGracePeriod: Duration
    /// libzmq I/O threads.
    public var ioThreads: Int32
    /// CURVE encryption and authentication of clients and workers; nil: none (then only loopback and `ipc://`
    /// endpoints may be bound, unless ``allowInsecureEndpoints``).
    public var curve: BrokerCurveConfiguration?
    /// Without CURVE, allow binding endpoints other hosts can reach (plain text, anyone may connect). Off by
    /// default: see ``checkEndpointSecurity()``.
    public var allowInsecureEndpoints: Bool

    public init(
        frontendEndpoint: String = "tcp://127.0.0.1:5555",
        backendEndpoint: String = "tcp://127.0.0.1:5556",
        defaultDeadline: Duration = .seconds(3),
        hardLimit: Duration = .seconds(60),
        maxReplyMargin: Duration = .milliseconds(50),
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        resultTTL: Duration = .seconds(60),
        maxStoredResults: Int = 100_000,
        maxBodySize: Int = 1 << 20,
        maxQueuedRequests: Int = 100_000,
        workerGracePeriod: Duration = .seconds(5),
        shutdownGracePeriod: Duration = .seconds(5),
        ioThreads: Int32 = 1,
        curve: BrokerCurveConfiguration? = nil,
        allowInsecureEndpoints: Bool = false
    ) {
        self.frontendEndpoint = frontendEndpoint
        self.backendEndpoint = backendEndpoint
        self.defaultDeadline = defaultDeadline
        self.hardLimit = hardLimit
        self.maxReplyMargin = maxReplyMargin
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.resultTTL = resultTTL
        self.maxStoredResults = maxStoredResults
        self.maxBodySize = maxBodySize
        self.maxQueuedRequests = maxQueuedRequests
        self.workerGracePeriod = workerGracePeriod
        self.shutdownGracePeriod = shutdownGracePeriod
        self.ioThreads = ioThreads
        self.curve = curve
        self.allowInsecureEndpoints = allowInsecureEndpoints
    }
}
