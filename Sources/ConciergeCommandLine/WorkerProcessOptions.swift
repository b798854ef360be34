public import ArgumentParser
import ConciergeTracing
public import IntentKit
import IntentWorker
import Logging
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a worker process takes: `concierge worker`, the slim `concierge-worker` and any handler author's
/// worker run through ``WorkerMain`` share these options, and run the worker the same way.
///
/// What a pool passes to every worker it starts (`concierge pool`, with or without `--executable`) comes in the
/// environment, and a flag given on the command line wins over it:
///
/// | variable | flag |
/// |---|---|
/// | `CONCIERGE_BROKER` | `--broker` |
/// | `CONCIERGE_WORKER_NAME` | `--name` |
/// | `CONCIERGE_CURVE_SERVER_KEY`, `CONCIERGE_CURVE_SECRET_KEY` | `--curve-server-key`, `--curve-secret-key` |
public struct WorkerProcessOptions: ParsableArguments, Sendable {
    /// The environment variables a pool sets for its workers.
    public enum Environment {
        public static let broker = "CONCIERGE_BROKER"
        public static let workerName = "CONCIERGE_WORKER_NAME"
        public static let curveServerKey = "CONCIERGE_CURVE_SERVER_KEY"
        public static let curveSecretKey = "CONCIERGE_CURVE_SECRET_KEY"
    }

    @Option(
        help: """
            The broker's backend endpoint (tcp://host:port or ipc://path), or several separated by commas (the \
            active broker and its standbys: the worker follows the active one). Default: $CONCIERGE_BROKER, else \
            tcp://127.0.0.1:5556.
            """)
    public var broker: String?

    @Option(help: "Worker name (its routing id). Default: $CONCIERGE_WORKER_NAME, else worker-<pid>.")
    public var name: String?

    @OptionGroup public var worker: WorkerOptions
    @OptionGroup public var curve: CurveClientOptions
    @OptionGroup public var heartbeat: HeartbeatOption
    @OptionGroup public var logging: LoggingOptions

    public init() {}

    public func validate() throws {
        _ = try BrokerEndpointList.parse(brokerEndpoints, checkSyntax: true)
        try CurveClientOptions.checkPair(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    /// `--broker`, else `$CONCIERGE_BROKER`, else the default backend endpoint.
    public var brokerEndpoints: String {
        broker ?? Self.environment(Environment.broker) ?? WorkerConfiguration(name: "").brokerEndpoint
    }

    /// `--curve-server-key`, else `$CONCIERGE_CURVE_SERVER_KEY`.
    public var curveServerKey: String? { curve.curveServerKey ?? Self.environment(Environment.curveServerKey) }

    /// `--curve-secret-key`, else `$CONCIERGE_CURVE_SECRET_KEY`.
    public var curveSecretKey: String? { curve.curveSecretKey ?? Self.environment(Environment.curveSecretKey) }

    /// Bootstraps logging (and tracing, with `--tracing`), then runs one worker serving `provider` until SIGTERM or
    /// SIGINT, or until the pool that started this process is gone (``ParentWatch``); either drains the worker, and
    /// this returns once it has drained (with `--tracing`, once the span exporter has sent the last spans too).
    public func run(provider: HandlerProvider) async throws {
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.worker")
        let tracing = try TracingBootstrap.bootstrap(
            TracingConfiguration(enabled: worker.tracing, serviceName: "concierge-worker"), logger: logger)
        var configuration = WorkerConfiguration(
            brokerEndpoints: try BrokerEndpointList.parse(brokerEndpoints, checkSyntax: true),
            name: name ?? Self.environment(Environment.workerName),
            capacity: worker.capacity,
            heartbeatInterval: .milliseconds(heartbeat.heartbeatMs),
            jobExecution: WorkerConfiguration.JobExecution(rawValue: worker.jobsOn) ?? .workerThread,
            curve: try CurveClientOptions.keys(serverKey: curveServerKey, secretKey: curveSecretKey)
        )
        configuration.tracing = worker.tracing
        let service = Worker(configuration: configuration, provider: provider, logger: logger)
        var watched: [String: String] = [:]
        watched["CONCIERGE_POOL_PID"] = Self.environment("CONCIERGE_POOL_PID")
        let watch = ParentWatch(environment: watched, logger: logger)
        // The signals are trapped before the worker starts and stay trapped until it has drained: a second SIGTERM
        // or SIGINT while it drains changes nothing.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        defer { withExtendedLifetime(signals) {} }
        // The exporter runs around the worker, so it sends the worker's last spans after the drain.
        if let tracing {
            try await tracing.exporting { try await Self.serve(service, watch: watch, signals: signals) }
        } else {
            try await Self.serve(service, watch: watch, signals: signals)
        }
    }

    /// Runs `worker` until it has drained, asking it to drain at the first of `signals` or once `watch` finds the pool
    /// gone.
    static func serve(_ worker: Worker, watch: ParentWatch, signals: UnixSignalsSequence) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Whichever comes first; the other is cancelled (the watch stops looking once the worker drains).
                let shutdown = await withTaskGroup(of: Bool.self) { first in
                    first.addTask {
                        for await _ in signals { return true }
                        return false
                    }
                    first.addTask { await watch.waitUntilPoolGone() }
                    let shutdown = await first.next() ?? false
                    first.cancelAll()
                    return shutdown
                }
                if shutdown { worker.stop() }
            }
            defer { group.cancelAll() }
            try await worker.run()
        }
    }

    /// A non-empty environment variable.
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }
}
