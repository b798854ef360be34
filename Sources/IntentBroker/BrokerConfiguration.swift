public import CoreMetrics
public import IntentJournal
public import IntentPermissions
public import IntentWire

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
    /// At most this many bytes of finished results (bodies, keys and the memory of an entry) are kept for STATUS
    /// queries; past it the oldest go first (bounded memory under overload). The default, 32 MiB, is
    /// about 17,000 echo replies: 17 s of results at 1,000 requests/s (it was 48 MiB until 2026-11-24, when the broker
    /// reached 126 MiB of its 128 MiB goal at 2× overload; `Docs/OVERLOAD.md`).
    public var resultsMemory: Int
    /// Largest request body accepted; larger ones get error `too-large`.
    public var maxBodySize: Int
    /// libzmq's limit on one frame from a client or a worker (`ZMQ_MAXMSGSIZE` on both sockets): libzmq disconnects
    /// a peer that sends a larger frame, and the message gets no answer. nil (the default) means twice
    /// ``maxBodySize`` plus 64 KiB, so that a body somewhat above ``maxBodySize`` still gets `too-large` and worker
    /// results, which grow as phases add their output, have room; -1 means no limit. See ``transportFrameLimit``.
    public var maxMessageSize: Int?
    /// The most requests waiting for a worker (all intent types together); past it, error `busy`. A queued request
    /// costs the broker its body plus about 750 bytes (the request, its index entries and timer: 1,073 bytes for a
    /// 321-byte body in `Tests/python/test_memory.py`), so the default 50,000 is about 51 MiB (`Docs/OVERLOAD.md`).
    public var maxQueuedRequests: Int
    /// The most requests of one intent type waiting for a worker, so one flooded type cannot fill the whole queue;
    /// past it, error `busy`. The default, 25,000 (about 26 MiB of echo requests), is a third of a second of echo
    /// work at this project's measured capacity: a longer queue added latency and memory, not goodput, and with it
    /// the broker stays within 128 MiB at 2× overload of one intent type (`Docs/OVERLOAD.md`).
    public var maxQueuedPerIntentType: Int
    /// The longest a request may be expected to wait in its queue before a worker starts it, at the intent type's
    /// measured pace; a request that would wait longer gets `busy` at once. nil (the default) means 80% of the
    /// request's deadline: admit whatever can still start in time (`Docs/OVERLOAD.md`).
    public var maxQueueWait: Duration? = nil
    /// The expected wait a standing queue is held to: 20 ms by default; nil: no such limit. A queue absorbs bursts:
    /// while it empties now and then, requests are admitted up to ``maxQueueWait`` (or 80% of their deadline). Once
    /// an intent type's queue has not emptied for ``standingQueueInterval``, the load is more than its workers can
    /// take, and waiting longer only adds latency and memory: new requests are then admitted only if they would start
    /// within it (or within the time the type's workers take to start one job per slot, when longer), and the rest
    /// get `busy` at once (CoDel's idea, applied at admission: a target of a few milliseconds of standing wait, judged
    /// over an interval, so that bursts pass). On by default since the measurements of 2026-11-29: at 2x overload
    /// with a 1 s deadline it cut the first reply's p50 from about 290 ms (half the deadline, in a queue that never
    /// drains) to about 20 ms and its p99 from about 360 ms to about 130 ms, with the same goodput
    /// (`Docs/OVERLOAD.md`). It sheds requests that would still have started within their deadline; nil restores
    /// the protocol's plain rule (80% of the deadline).
    public var standingQueueWait: Duration? = .milliseconds(20)
    /// The last phase a lifecycle's job may run on one `CIPW03` worker without coming back to the broker
    /// (`Schemas/PROTOCOL.md` section 5.15): the worker runs the next phase at once after a `continue`, and the
    /// round trip between phases is saved. `.resolve`: no chaining (a job per phase, as for older workers).
    /// `.confirm`, the default: resolve and confirm in one job; handle, the phase with effects, is always a job of
    /// its own, so a lost worker's resolve or confirm still runs again elsewhere and a handle dispatch is recorded in
    /// the journal before it goes out. `.handle`: the whole lifecycle in one job, for requests without an
    /// idempotency key on a broker without a journal (others chain to confirm); the worker may then start handle
    /// before the broker hears of it, so such a request ends `worker-lost` if its worker is lost in any phase.
    public var lifecycleChainEnd: RequestPhase = .confirm
    /// How many times a resolve or confirm job whose worker was lost while running it (crashed, froze, or was
    /// replaced) is sent again (section 6.7); the next loss ends the request with `worker-crashed`. A request whose
    /// worker was lost is a suspect: it runs alone on its next worker, so that a second loss is its own. 0 ends every
    /// resolve or confirm lost with its worker.
    public var maxCrashRetries = 1
    /// Without effect since definition versions are served side by side and requests pinned to theirs (section
    /// 5.18): another `version` no longer needs the operator's leave. A different definition under the same version
    /// is still refused (`definition-mismatch`, section 5.16).
    @available(*, deprecated, message: "another version is always served side by side (PROTOCOL.md 5.18)")
    public var allowDefinitionUpgrades = false
    /// How long a queue must go without emptying to count as standing (see ``standingQueueWait``); CoDel's interval.
    public var standingQueueInterval: Duration = .milliseconds(100)
    /// The most replies libzmq holds for one client connection that is not reading (its send high-water mark).
    /// Past it a reply is not delivered (counted; the result stays available to STATUS): a client that stops
    /// reading never blocks the broker or other clients.
    public var clientQueueLimit: Int
    /// After the last worker for an intent type goes away, requests for it wait this long for a new one
    /// (a pool restarting its workers) before they fail with `unknown-intent`.
    public var workerGracePeriod: Duration
    /// On shutdown, how long in-flight requests get to finish before they fail with `shutting-down`.
    public var shutdownGracePeriod: Duration
    /// On shutdown, how long the broker waits, after its last reply, for libzmq to hand the replies still queued to
    /// the network (`ZMQ_LINGER` on the frontend; the backend, which only has DISCONNECTs left to send, waits at most
    /// a second). Replies to clients that are gone are dropped at once; only a client that is connected and not
    /// reading can make the broker wait this long.
    public var shutdownLinger: Duration
    /// After the broker starts, requests for intent types no worker has announced yet wait this long (within their
    /// deadline) for workers to register, instead of failing at once with `unknown-intent` (PROTOCOL.md 6.6).
    public var startupGracePeriod: Duration
    /// Warnings caused by one peer (a stray RESULT, a malformed message, ...) are logged at most once per this
    /// interval per peer and kind; every event is still counted in ``BrokerStatistics``.
    public var peerWarningInterval: Duration
    /// How long the record of an idempotency key is kept after its request ended (`Docs/IDEMPOTENCY.md`).
    public var idempotencyTTL: Duration
    /// At most this many ended idempotency records are kept; past it the oldest go first (each counted).
    public var maxIdempotencyRecords: Int
    /// At most this many bytes of ended idempotency records (scopes and stored replies) are kept.
    public var idempotencyMemory: Int
    /// After a client's CANCEL reaches a running job, how long the broker waits for its worker's RESULT (the handler
    /// stopped, or finished first) before it answers `cancelled` with the job's outcome unknown (PROTOCOL.md 4.10.2).
    public var cancelGracePeriod: Duration
    /// Where the broker records what it accepted and answered (`Docs/JOURNAL.md`): nil for none (memory
    /// only: a restart loses what was in flight and the results kept for STATUS), or the path of a SQLite journal
    /// made by `concierge journal init`.
    public var journalPath: String?
    /// When the journal's commits reach the disk: every commit (the default), or at most an interval apart.
    public var journalSync: JournalSync = .everyCommit
    /// How long a conversation may wait for its caller's next turn before it ends `expired` (PROTOCOL.md 4.11).
    public var conversationTTL: Duration = .seconds(300)
    /// At most this many conversations (open, and ended ones kept for the result TTL); a first turn past it is
    /// refused `busy`.
    public var maxConversations = 10_000
    /// At most this many bytes of conversations (their intents and kept replies); a first turn past it is refused
    /// `busy`.
    public var conversationsMemory = 64 << 20
    /// How often a conversation may ask about one parameter, unless its intent definition says (`maxAsks`).
    public var conversationMaxAsks = 3
    /// Where transcripts of recorded conversations are written (one JSON Lines file each, `Docs/TRANSCRIPTS.md`);
    /// nil: none are recorded.
    public var transcriptDirectory: String?
    /// Record every conversation, not only those whose first turn asks for it (flag `record`).
    public var recordAllConversations = false
    /// Make spans (`concierge.request`, `concierge.job`; Docs/TRACING.md) with the bootstrapped tracer, and send
    /// workers the job span's trace context. Off: no span is made, and a JOB carries the request's own trace
    /// context unchanged (pass-through).
    public var tracing = false
    /// With a PostgreSQL journal shared by several brokers (failover, `Docs/JOURNAL.md`): when another broker is
    /// active, wait for it to stop and take over (binding nothing until then), and stand by again if another broker
    /// takes over while this one lost its database. False: refuse to start (`journal-locked`) when another broker
    /// is active.
    public var standby = false
    /// Where the broker's metrics go (`Docs/OPERATIONS.md` names them): nil for none. A command passes a
    /// swift-prometheus factory and serves its registry over HTTP (`--http`).
    public var metricsFactory: (any MetricsFactory)?
    /// libzmq I/O threads.
    public var ioThreads: Int32
    /// CURVE encryption and authentication of clients and workers; nil: none (then only loopback and `ipc://`
    /// endpoints may be bound, unless ``allowInsecureEndpoints``).
    public var curve: BrokerCurveConfiguration?
    /// Without CURVE, allow binding endpoints other hosts can reach (plain text, anyone may connect). Off by
    /// default: see ``checkEndpointSecurity()``.
    public var allowInsecureEndpoints: Bool
    /// Who may send and serve what (`Docs/PERMISSIONS.md`, PROTOCOL.md 13.3): nil, every admitted key may do
    /// everything. Needs ``curve``: an identity is a CURVE key. ``Broker/replacePermissions(_:)`` changes it while
    /// the broker runs.
    public var permissions: Permissions?
    /// Where the audit log goes (`Docs/PERMISSIONS.md`): a file appended to, or `-` for standard output; nil: none.
    /// One JSON line per request accepted, refused and ended (time, identity, key, intent type, phase, outcome,
    /// request id, routing id; never a body), written by a thread of its own.
    public var auditLog: String?

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
        resultsMemory: Int = 32 << 20,
        maxBodySize: Int = 1 << 20,
        maxMessageSize: Int? = nil,
        maxQueuedRequests: Int = 50_000,
        maxQueuedPerIntentType: Int = 25_000,
        clientQueueLimit: Int = 100_000,
        workerGracePeriod: Duration = .seconds(5),
        shutdownGracePeriod: Duration = .seconds(5),
        shutdownLinger: Duration = .seconds(5),
        startupGracePeriod: Duration = .seconds(5),
        peerWarningInterval: Duration = .seconds(10),
        idempotencyTTL: Duration = .seconds(24 * 3600),
        maxIdempotencyRecords: Int = 100_000,
        idempotencyMemory: Int = 256 << 20,
        cancelGracePeriod: Duration = .seconds(1),
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
        self.resultsMemory = resultsMemory
        self.maxBodySize = maxBodySize
        self.maxMessageSize = maxMessageSize
        self.maxQueuedRequests = maxQueuedRequests
        self.maxQueuedPerIntentType = maxQueuedPerIntentType
        self.clientQueueLimit = clientQueueLimit
        self.workerGracePeriod = workerGracePeriod
        self.shutdownGracePeriod = shutdownGracePeriod
        self.shutdownLinger = shutdownLinger
        self.startupGracePeriod = startupGracePeriod
        self.peerWarningInterval = peerWarningInterval
        self.idempotencyTTL = idempotencyTTL
        self.maxIdempotencyRecords = maxIdempotencyRecords
        self.idempotencyMemory = idempotencyMemory
        self.cancelGracePeriod = cancelGracePeriod
        self.ioThreads = ioThreads
        self.curve = curve
        self.allowInsecureEndpoints = allowInsecureEndpoints
    }

    /// The `ZMQ_MAXMSGSIZE` the broker sets: ``maxMessageSize``, or twice ``maxBodySize`` plus 64 KiB.
    public var transportFrameLimit: Int { maxMessageSize ?? min(maxBodySize, Int.max / 4) * 2 + 65_536 }
}
