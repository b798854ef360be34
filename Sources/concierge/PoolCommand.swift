import ArgumentParser
import ConciergeCommandLine
import IntentPool
import IntentWorker
import Logging
import ServiceLifecycle
import UnixSignals

struct PoolOptions: ParsableArguments {
    @Option(name: .customLong("workers"), help: "Number of worker processes.")
    var size: Int = Defaults.pool.size

    @Option(help: "Control endpoint for resizing a running pool (`concierge scale`).")
    var control: String = Defaults.control
}

struct PoolCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool",
        abstract: "Run and supervise N worker processes (restarts crashed ones; resize with `concierge scale`).",
        discussion: """
            By default the pool runs `concierge worker` (the example handlers). Give --executable (and arguments \
            after --) to supervise any worker program; each gets CONCIERGE_WORKER_NAME=pool-<slot>.
            """
    )

    @Option(
        help: "The broker's backend endpoint, or several separated by commas (passed to the default worker).")
    var broker: String = Defaults.worker.brokerEndpoint

    @OptionGroup var pool: PoolOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var curve: CurveClientOptions
    @OptionGroup var heartbeat: HeartbeatOption
    @OptionGroup var logging: LoggingOptions

    @Option(help: "Worker executable to supervise instead of `concierge worker`.")
    var executable: String?

    @Argument(parsing: .postTerminator, help: "Arguments for --executable.")
    var arguments: [String] = []

    func validate() throws {
        _ = try BrokerEndpointList.parse(broker)
        if executable != nil && curve.curveServerKey != nil {
            throw ValidationError(
                "--curve-server-key and --curve-secret-key go to the default worker; give your --executable its own "
                    + "flags after --"
            )
        }
    }

    func run() async throws {
        _ = try curve.keys()  // fail now on a bad key file, not in every worker
        let level = logging.bootstrap()
        let logger = Logger(label: "concierge.pool")
        let configuration: PoolConfiguration
        if let executable {
            configuration = PoolConfiguration(
                executable: executable, arguments: arguments, size: pool.size, controlEndpoint: pool.control
            )
        } else {
            let command = defaultWorkerCommand
            configuration = PoolConfiguration(
                executable: command.executable,
                arguments: command.arguments + [
                    "--broker", broker, "--heartbeat-ms",
                    String(heartbeat.heartbeatMs), "--log-level", level.rawValue, "--log-format", logging.logFormat,
                ] + worker.workerArguments + curve.workerArguments,
                size: pool.size,
                controlEndpoint: pool.control
            )
        }
        let service = WorkerPool(configuration: configuration, logger: logger)
        let group = ServiceGroup(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        try await group.run()
    }
}
