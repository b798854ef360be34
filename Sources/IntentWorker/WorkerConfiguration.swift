public import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a ``Worker`` can be told.
public struct WorkerConfiguration: Sendable {
    /// Where a worker runs its handlers.
    public enum JobExecution: String, Sendable, CaseIterable {
        /// On the worker's socket thread, between polls: no thread hop per job (the fastest). A handler that
        /// holds the thread (computes without suspending, or blocks) for more than a fifth of the heartbeat
        /// interval (at most 100 ms) gets the thread to itself: a standby thread takes the socket loop over, so
        /// heartbeats and other jobs go on, and such handlers run in parallel on the cores there are.
        case workerThread = "thread"
        /// On Swift's shared cooperative pool, in parallel on every core; each job costs two thread hops.
        case sharedPool = "pool"
    }

    /// The default ``capacity``: 64 jobs at once.
    ///
    /// A job slot stays empty while its RESULT travels to the broker and the next JOB comes back, so a worker whose
    /// handlers answer in microseconds needs more slots than it has cores to stay busy; one whose handlers wait on
    /// I/O needs them anyway. On the echo bench (2 workers, 100 in flight, `Docs/PROFILES.md`, "The default
    /// capacity") 64 gave 20–25% more requests per second than 16 and less CPU per request in every process, with
    /// no worse latency for a light client beside a flood. Lower it for handlers that compute for long (the cores
    /// bound them anyway), or to bound how many handle jobs a crash can cut short (each ends `worker-lost`).
    public static let defaultCapacity = 64

    /// The brokers' backend endpoints (at least one). With several — brokers sharing one PostgreSQL journal, one of
    /// them active — the worker is connected to one at a time and follows the active one: it moves to the next
    /// endpoint (round-robin, forever, with the reconnection backoff) when its connection does not complete a
    /// handshake within one heartbeat interval (a standby binds nothing), or when the broker is silent for
    /// ``heartbeatLiveness`` intervals; then it registers (READY) with the broker there.
    public var brokerEndpoints: [String]
    /// The first of ``brokerEndpoints``; setting it replaces the list with this one endpoint.
    public var brokerEndpoint: String {
        get { brokerEndpoints.first ?? "" }
        set { brokerEndpoints = [newValue] }
    }
    /// The worker's name: its ZeroMQ routing id (so a restarted worker with the same name takes over its slot)
    /// and how the broker's logs and progress replies name it. Defaults to `worker-<pid>`.
    public var name: String
    /// Jobs it runs at once; the broker never gives it more. Defaults to ``defaultCapacity``.
    public var capacity: Int
    /// How often it heartbeats the broker (and expects to hear from it); also how long a connection gets to complete
    /// its handshake before a worker with several endpoints moves to the next.
    public var heartbeatInterval: Duration
    /// The broker is considered gone after this many silent intervals; the worker then reconnects (to the next of
    /// ``brokerEndpoints`` if it has several) after the reconnection backoff.
    public var heartbeatLiveness: Int
    /// First reconnection delay; doubles on every failed attempt up to ``reconnectMaxDelay``.
    public var reconnectInitialDelay: Duration
    public var reconnectMaxDelay: Duration
    /// On graceful shutdown, how long running jobs get to finish before the worker leaves anyway.
    public var drainTimeout: Duration
    /// Where handlers run.
    public var jobExecution: JobExecution
    /// CURVE: the broker's public key and this worker's key pair (its public key must be on the broker's worker
    /// allowlist); nil: no encryption (only for brokers on loopback or `ipc://`).
    public var curve: CurveClientKeys?
    /// Make a `concierge.handler` span for each phase a handler runs (Docs/TRACING.md), with the tracer
    /// bootstrapped in `InstrumentationSystem`, a child of the JOB's trace context. Off: no span; the handler still
    /// sees the JOB's trace context (``HandlerContext/traceContext``).
    public var tracing = false

    /// A configuration for one broker endpoint.
    public init(
        brokerEndpoint: String = "tcp://127.0.0.1:5556",
        name: String? = nil,
        capacity: Int = Self.defaultCapacity,
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        reconnectInitialDelay: Duration = .milliseconds(250),
        reconnectMaxDelay: Duration = .seconds(8),
        drainTimeout: Duration = .seconds(30),
        jobExecution: JobExecution = .workerThread,
        curve: CurveClientKeys? = nil
    ) {
        self.init(
            brokerEndpoints: [brokerEndpoint], name: name, capacity: capacity, heartbeatInterval: heartbeatInterval,
            heartbeatLiveness: heartbeatLiveness, reconnectInitialDelay: reconnectInitialDelay,
            reconnectMaxDelay: reconnectMaxDelay, drainTimeout: drainTimeout, jobExecution: jobExecution, curve: curve)
    }

    /// A configuration for several broker endpoints (the active broker and its standbys, in any order).
    public init(
        brokerEndpoints: [String],
        name: String? = nil,
        capacity: Int = Self.defaultCapacity,
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLiveness: Int = 3,
        reconnectInitialDelay: Duration = .milliseconds(250),
        reconnectMaxDelay: Duration = .seconds(8),
        drainTimeout: Duration = .seconds(30),
        jobExecution: JobExecution = .workerThread,
        curve: CurveClientKeys? = nil
    ) {
        self.brokerEndpoints = brokerEndpoints
        self.name = name ?? "worker-\(getpid())"
        self.capacity = capacity
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaxDelay = reconnectMaxDelay
        self.drainTimeout = drainTimeout
        self.jobExecution = jobExecution
        self.curve = curve
    }
}
