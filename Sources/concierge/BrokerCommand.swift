import ArgumentParser
import ConciergeCommandLine
import ConciergeHTTP
import ConciergeTracing
import IntentBroker
import IntentJournal
import IntentWire
import Logging
import ServiceLifecycle
import UnixSignals

struct BrokerOptions: ParsableArguments {
    @Option(help: "Endpoint clients connect to.")
    var frontend: String = Defaults.broker.frontendEndpoint

    @Option(help: "Endpoint workers connect to.")
    var backend: String = Defaults.broker.backendEndpoint

    @Option(help: "Default first-reply deadline in milliseconds.")
    var deadlineMs: Int = Defaults.broker.defaultDeadline.wholeMilliseconds

    @Option(help: "Hard limit per request in milliseconds (then error `timeout`).")
    var hardLimitMs: Int = Defaults.broker.hardLimit.wholeMilliseconds

    @Option(
        help: "Act on a deadline up to this many ms early (a tenth of the deadline at most) so replies arrive in time.")
    var replyMarginMs: Int = Defaults.broker.maxReplyMargin.wholeMilliseconds

    @Option(help: "Heartbeat interval in milliseconds.")
    var heartbeatMs: Int = Defaults.broker.heartbeatInterval.wholeMilliseconds

    @Option(help: "Most finished results kept for STATUS queries.")
    var maxResults: Int = Defaults.broker.maxStoredResults

    @Option(help: "Most bytes of finished results (bodies and bookkeeping) kept for STATUS queries.")
    var resultsMemory: Int = Defaults.broker.resultsMemory

    @Option(help: "Most requests waiting for a worker (all intent types); past it, error `busy`.")
    var maxQueued: Int = Defaults.broker.maxQueuedRequests

    @Option(help: "Most requests of one intent type waiting for a worker; past it, error `busy`.")
    var maxQueuedPerType: Int = Defaults.broker.maxQueuedPerIntentType

    @Option(
        help: ArgumentHelp(
            "Longest expected wait in a queue, in milliseconds, at the intent type's measured pace: a request that "
                + "would wait longer gets `busy` at once (default: 80% of its deadline).",
            valueName: "ms"))
    var maxQueueWaitMs: Int?

    @Option(
        help: ArgumentHelp(
            "Expected wait a standing queue is held to, in milliseconds (20 by default; 0: no limit). A queue that "
                + "has not emptied for --standing-queue-interval-ms then admits only requests that would start within "
                + "this; the rest get `busy` at once.",
            valueName: "ms"))
    var standingQueueWaitMs: Int = Defaults.broker.standingQueueWait?.wholeMilliseconds ?? 0

    @Option(help: ArgumentHelp("How long a queue must go without emptying to count as standing.", valueName: "ms"))
    var standingQueueIntervalMs: Int = Defaults.broker.standingQueueInterval.wholeMilliseconds

    @Option(help: "Most replies held for one client connection that does not read; later ones wait for STATUS.")
    var clientQueue: Int = Defaults.broker.clientQueueLimit

    @Option(help: "Largest request body in bytes.")
    var maxBody: Int = Defaults.broker.maxBodySize

    @Option(
        help: ArgumentHelp(
            "Largest frame libzmq accepts from a client or worker, in bytes (a peer sending a larger one is "
                + "disconnected); default twice --max-body plus 64 KiB.",
            valueName: "bytes"
        )
    )
    var maxMessage: Int?

    @Option(help: "How long finished results stay available to STATUS, in seconds.")
    var resultTtl: Int = Defaults.broker.resultTTL.wholeSeconds

    @Option(
        help: "After the last worker of an intent type leaves, how long its requests wait for a new one, in ms.")
    var workerGraceMs: Int = Defaults.broker.workerGracePeriod.wholeMilliseconds

    @Option(help: "On shutdown, how long in-flight requests get to finish, in milliseconds.")
    var shutdownGraceMs: Int = Defaults.broker.shutdownGracePeriod.wholeMilliseconds

    @Option(
        help: "On shutdown, how long queued replies get to reach connected clients before the sockets close, in ms.")
    var shutdownLingerMs: Int = Defaults.broker.shutdownLinger.wholeMilliseconds

    @Option(
        help: """
            After the broker starts, how long requests for intent types no worker announced yet wait for workers to \
            register before they fail with `unknown-intent`, in milliseconds.
            """)
    var startupGraceMs: Int = Defaults.broker.startupGracePeriod.wholeMilliseconds

    @Option(help: "How long the record of an idempotency key is kept after its request ended, in seconds.")
    var idempotencyTtl: Int = Defaults.broker.idempotencyTTL.wholeSeconds

    @Option(help: "Most ended idempotency records kept; past it the oldest go first (a retry of one runs again).")
    var maxIdempotencyRecords: Int = Defaults.broker.maxIdempotencyRecords

    @Option(help: "Most bytes of ended idempotency records (scopes and stored replies) kept.")
    var idempotencyMemory: Int = Defaults.broker.idempotencyMemory

    @Option(help: "How long a conversation may wait for its caller's next turn before it ends `expired`, in seconds.")
    var conversationTtl: Int = Defaults.broker.conversationTTL.wholeSeconds

    @Option(
        help: "Most conversations kept (open ones, and ended ones for the result TTL); a new one past it is `busy`.")
    var maxConversations: Int = Defaults.broker.maxConversations

    @Option(help: "Most bytes of conversations (intents and kept replies); a new one past it is `busy`.")
    var conversationsMemory: Int = Defaults.broker.conversationsMemory

    @Option(
        help: "How often a conversation may ask about one parameter, unless its intent definition says (`maxAsks`).")
    var conversationMaxAsks: Int = Defaults.broker.conversationMaxAsks

    @Option(
        help: """
            Record the transcripts of conversations that ask for it (flag `record`) in this directory, one JSON Lines \
            file each (Docs/TRANSCRIPTS.md).
            """)
    var transcripts: String?

    @Flag(help: "With --transcripts: record every conversation, not only those that ask for it.")
    var recordAllConversations = false

    @Option(
        help: """
            The last phase a lifecycle's job runs on one CIPW03 worker before coming back to the broker: `off` (a \
            job per phase), `confirm` (resolve and confirm in one job; handle is always a job of its own), or \
            `handle` (the whole lifecycle in one job when the request has no idempotency key and the broker no \
            journal; the request then ends `worker-lost` if its worker is lost in any phase). See \
            Schemas/PROTOCOL.md section 5.15.
            """)
    var chainLifecycle: String = "confirm"

    @Option(
        help: """
            How many times a resolve or confirm job is sent again after its worker was lost while running it \
            (crashed, froze or was replaced); the next loss ends the request `worker-crashed` (the request itself \
            is suspect). A request whose worker was lost runs alone on its next worker. See Schemas/PROTOCOL.md \
            section 6.7.
            """)
    var maxCrashRetries: Int = Defaults.broker.maxCrashRetries

    @Flag(
        help: ArgumentHelp(
            """
            No longer needed, and without effect: another "version" of a definition is always served side by side, \
            each request pinned to its own (Schemas/PROTOCOL.md section 5.18). Kept so that existing scripts start.
            """, visibility: .hidden))
    var allowDefinitionUpgrades = false

    @Option(
        help: """
            After a CANCEL reaches a running job, how long its worker gets to answer (the handler stopped, or \
            finished first) before the request ends `cancelled` with the job's outcome unknown, in milliseconds.
            """)
    var cancelGraceMs: Int = Defaults.broker.cancelGracePeriod.wholeMilliseconds

    @Option(
        help: """
            Where to record accepted requests, handle jobs given out, endings and idempotency records before acting \
            on them: the path of a SQLite journal made by `concierge journal init`, a PostgreSQL journal's URL \
            (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, shared by an active broker and its standbys), or \
            `none` (memory only: a restart loses what was in flight and the results kept for STATUS). See \
            Docs/JOURNAL.md.
            """)
    var journal: String = "none"

    @Option(
        help: """
            When journal commits reach the disk: `batch` (every commit, the default: nothing acknowledged is lost) \
            or a number of milliseconds (commits reach the operating system at once, the disk at most this far \
            apart: an OS crash or power loss can lose that window).
            """)
    var journalFsync: String = "batch"

    @Flag(
        help: """
            With a PostgreSQL journal: if another broker is active on it, stand by (bind nothing) and take over when \
            it stops or its host is lost; without this flag such a broker refuses to start (journal-locked).
            """)
    var standby = false

    var configuration: BrokerConfiguration {
        var configuration = BrokerConfiguration(
            frontendEndpoint: frontend,
            backendEndpoint: backend,
            defaultDeadline: .milliseconds(deadlineMs),
            hardLimit: .milliseconds(hardLimitMs),
            maxReplyMargin: .milliseconds(replyMarginMs),
            heartbeatInterval: .milliseconds(heartbeatMs),
            resultTTL: .seconds(resultTtl),
            maxStoredResults: maxResults,
            resultsMemory: resultsMemory,
            maxBodySize: maxBody,
            maxMessageSize: maxMessage,
            maxQueuedRequests: maxQueued,
            maxQueuedPerIntentType: maxQueuedPerType,
            clientQueueLimit: clientQueue,
            workerGracePeriod: .milliseconds(workerGraceMs),
            shutdownGracePeriod: .milliseconds(shutdownGraceMs),
            shutdownLinger: .milliseconds(shutdownLingerMs),
            startupGracePeriod: .milliseconds(startupGraceMs),
            idempotencyTTL: .seconds(idempotencyTtl),
            maxIdempotencyRecords: maxIdempotencyRecords,
            idempotencyMemory: idempotencyMemory,
            cancelGracePeriod: .milliseconds(cancelGraceMs)
        )
        configuration.journalPath = journal == "none" ? nil : journal
        if let milliseconds = Int(journalFsync) { configuration.journalSync = .interval(.milliseconds(milliseconds)) }
        configuration.standby = standby
        configuration.maxQueueWait = maxQueueWaitMs.map { .milliseconds($0) }
        configuration.standingQueueWait = standingQueueWaitMs > 0 ? .milliseconds(standingQueueWaitMs) : nil
        configuration.standingQueueInterval = .milliseconds(standingQueueIntervalMs)
        configuration.lifecycleChainEnd = chainLifecycle == "off" ? .resolve : RequestPhase(chainLifecycle) ?? .confirm
        configuration.maxCrashRetries = maxCrashRetries
        configuration.conversationTTL = .seconds(conversationTtl)
        configuration.maxConversations = maxConversations
        configuration.conversationsMemory = conversationsMemory
        configuration.conversationMaxAsks = conversationMaxAsks
        configuration.transcriptDirectory = transcripts
        configuration.recordAllConversations = recordAllConversations
        return configuration
    }

    mutating func validate() throws {
        for (flag, endpoint) in [("--frontend", frontend), ("--backend", backend)] {
            do {
                try EndpointSyntax.check(endpoint)
            } catch {
                throw ValidationError("\(flag): \(error.message)")
            }
        }
        guard journalFsync == "batch" || (Int(journalFsync).map { $0 > 0 } ?? false) else {
            throw ValidationError("--journal-fsync takes `batch` or a number of milliseconds above 0")
        }
        guard !journal.isEmpty else { throw ValidationError("--journal takes a path or `none`") }
        guard ["off", "confirm", "handle"].contains(chainLifecycle) else {
            throw ValidationError("--chain-lifecycle takes `off`, `confirm` or `handle`")
        }
        guard (1...100).contains(conversationMaxAsks) else {
            throw ValidationError("--conversation-max-asks takes 1 to 100 (got \(conversationMaxAsks))")
        }
        guard conversationTtl >= 1, maxConversations >= 0, conversationsMemory >= 0 else {
            throw ValidationError(
                "--conversation-ttl takes 1 second or more; --max-conversations and --conversations-memory 0 or more")
        }
        guard transcripts != nil || !recordAllConversations else {
            throw ValidationError("--record-all-conversations needs --transcripts DIR")
        }
        guard (0...100).contains(maxCrashRetries) else {
            throw ValidationError("--max-crash-retries takes 0 to 100 (got \(maxCrashRetries))")
        }
        if let maxQueueWaitMs, maxQueueWaitMs < 1 {
            throw ValidationError("--max-queue-wait-ms takes a number of milliseconds above 0")
        }
        guard standingQueueWaitMs >= 0, standingQueueIntervalMs >= 1 else {
            throw ValidationError(
                "--standing-queue-wait-ms takes 0 (no limit) or more, --standing-queue-interval-ms 1 or more")
        }
        guard !standby || journal.lowercased().hasPrefix("postgres") else {
            throw ValidationError(
                "--standby needs a PostgreSQL journal (--journal postgres://…) shared with the active broker")
        }
    }
}

struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the broker: clients on the frontend, workers on the backend."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var security: BrokerSecurityOptions
    @OptionGroup var http: HTTPOptions
    @OptionGroup var logging: LoggingOptions

    @Flag(
        help: """
            Make spans for requests and jobs and export them over OTLP/HTTP (Swift OTel; the OTEL_* environment \
            variables configure it, Docs/TRACING.md). Off: workers get the callers' trace context unchanged.
            """
    )
    var tracing = false

    func run() async throws {
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.broker")
        let exporter = try TracingBootstrap.bootstrap(
            TracingConfiguration(enabled: tracing, serviceName: "concierge-broker"), logger: logger)
        var configuration = broker.configuration
        configuration.tracing = tracing
        try security.apply(to: &configuration)
        let endpoint = try http.bindableEndpoint()
        let metrics = endpoint.map { _ in
            MetricsRegistry(deadline: configuration.defaultDeadline, hardLimit: configuration.hardLimit)
        }
        configuration.metricsFactory = metrics?.factory
        let service = try Broker(configuration: configuration, logger: logger)
        // On SIGTERM services stop in reverse order: the broker first, while /livez still answers; the span
        // exporter last, so that it sends the broker's last spans.
        var services: [any Service] = exporter.map { [$0] } ?? []
        if let endpoint, let metrics {
            services.append(BrokerHTTP.server(endpoint, metrics: metrics, broker: service, logger: logger))
        }
        services.append(service)
        if let path = security.permissions {
            services.append(PermissionsReloader(path: path, broker: service, logger: logger))
        }
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
