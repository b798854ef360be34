public import ArgumentParser
public import IntentKit
import IntentWorker
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a worker process takes: `concierge worker` and the slim `concierge-worker` share these options, and
/// run the worker the same way.
public struct WorkerProcessOptions: ParsableArguments, Sendable {
    @Option(
        help: """
            The broker's backend endpoint, or several separated by commas (the active broker and its standbys: the \
            worker follows the active one).
            """)
    public var broker: String = WorkerConfiguration(name: "").brokerEndpoint

    @Option(help: "Worker name (its routing id). Default: $CONCIERGE_WORKER_NAME, else worker-<pid>.")
    public var name: String?

    @OptionGroup public var worker: WorkerOptions
    @OptionGroup public var curve: CurveClientOptions
    @OptionGroup public var heartbeat: HeartbeatOption
    @OptionGroup public var logging: LoggingOptions

    public init() {}

    public func validate() throws {
        _ = try BrokerEndpointList.parse(broker)
    }

    /// Bootstraps logging, then runs one worker serving `provider` (with a `ParentWatch` when a pool started this
    /// process) until SIGTERM or SIGINT.
    public func run(provider: HandlerProvider) async throws {
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.worker")
        let configuration = WorkerConfiguration(
            brokerEndpoints: try BrokerEndpointList.parse(broker),
            name: name ?? environment("CONCIERGE_WORKER_NAME"),
            capacity: worker.capacity,
            heartbeatInterval: .milliseconds(heartbeat.heartbeatMs),
            jobExecution: WorkerConfiguration.JobExecution(rawValue: worker.jobsOn) ?? .workerThread,
            curve: try curve.keys()
        )
        let service = Worker(configuration: configuration, provider: provider, logger: logger)
        var watched: [String: String] = [:]
        watched["CONCIERGE_POOL_PID"] = environment("CONCIERGE_POOL_PID")
        let watch = ParentWatch(environment: watched, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: service),
                    .init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }

    private func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
