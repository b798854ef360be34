public import ZeroMQ

/// Everything a ``WorkerPool`` can be told.
public struct PoolConfiguration: Sendable {
    /// Path of the worker executable to run (any program that speaks CIP as a worker).
    public var executable: String
    /// Its arguments.
    public var arguments: [String]
    /// Number of worker processes to keep running.
    public var size: Int
    /// Each worker gets the environment variable `CONCIERGE_WORKER_NAME=<namePrefix>-<slot>`; a replacement
    /// reuses its slot's name, so the broker recognises the restart at once (ROUTER handover).
    public var namePrefix: String
    /// First restart delay after a worker dies; doubles while it keeps dying quickly, up to ``restartMaxDelay``.
    public var restartInitialDelay: Duration
    public var restartMaxDelay: Duration
    /// A worker that ran at least this long before dying restarts after the initial delay again.
    public var stableAfter: Duration
    /// How long a worker asked to stop (SIGTERM: drain) gets before it is killed (SIGKILL).
    public var stopTimeout: Duration
    /// Optional control endpoint (REP socket, e.g. `ipc:///tmp/concierge-pool.ctl`) answering `status` and
    /// `scale N`; see ``PoolControl``.
    public var controlEndpoint: String?
    /// How to ask the broker the pool serves for its load (`CIPW02 STATS`), once a second: for autoscaling and the
    /// pool's metrics. Nil: the pool never asks (its size changes only by hand).
    public var broker: PoolBrokerLink?
    /// Environment variables every worker gets on top of the pool's own environment (and of
    /// `CONCIERGE_WORKER_NAME`, `CONCIERGE_POOL_PID`): `concierge pool` passes its broker endpoints and CURVE keys
    /// this way, so that any worker executable built on `WorkerMain` takes them whatever its arguments.
    public var environment: [String: String] = [:]

    public init(
        executable: String,
        arguments: [String] = [],
        size: Int = 2,
        namePrefix: String = "pool",
        restartInitialDelay: Duration = .milliseconds(100),
        restartMaxDelay: Duration = .seconds(10),
        stableAfter: Duration = .seconds(10),
        stopTimeout: Duration = .seconds(30),
        controlEndpoint: String? = nil,
        broker: PoolBrokerLink? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.size = size
        self.namePrefix = namePrefix
        self.restartInitialDelay = restartInitialDelay
        self.restartMaxDelay = restartMaxDelay
        self.stableAfter = stableAfter
        self.stopTimeout = stopTimeout
        self.controlEndpoint = controlEndpoint
        self.broker = broker
    }
}

/// How a pool reaches its broker's backend to ask `CIPW02 STATS` (PROTOCOL.md 5.14): the endpoints its workers get
/// (it follows the active one as they do), the workers' CURVE keys, and whether it scales itself.
public struct PoolBrokerLink: Sendable {
    /// The broker's backend endpoints, in order (the active broker and its standbys).
    public var endpoints: [String]
    /// The workers' CURVE keys (the broker allows a STATS query from a peer with a worker key).
    public var curve: CurveClientKeys?
    /// Autoscaling limits and pace; nil: the pool only watches (metrics) and keeps its size.
    public var autoscale: AutoscaleConfiguration?
    /// How often the pool asks; an answer that takes longer counts as none.
    public var pollInterval: Duration

    public init(
        endpoints: [String], curve: CurveClientKeys? = nil, autoscale: AutoscaleConfiguration? = nil,
        pollInterval: Duration = .seconds(1)
    ) {
        self.endpoints = endpoints
        self.curve = curve
        self.autoscale = autoscale
        self.pollInterval = pollInterval
    }
}
