/// Everything a ``WorkerPool`` can be told.
public struct PoolConfiguration: Sendable {
    /// Path of the worker executable to run (any program that speaks CIP/1 as a worker).
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

    public init(
        executable: String,
        arguments: [String] = [],
        size: Int = 2,
        namePrefix: String = "pool",
        restartInitialDelay: Duration = .milliseconds(100),
        restartMaxDelay: Duration = .seconds(10),
        stableAfter: Duration = .seconds(10),
        stopTimeout: Duration = .seconds(30),
        controlEndpoint: String? = nil
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
    }
}
