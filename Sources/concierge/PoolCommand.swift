import ArgumentParser
import ConciergeCommandLine
import ConciergeHTTP
import IntentPool
import IntentWorker
import Logging
import ServiceLifecycle
import UnixSignals

struct PoolOptions: ParsableArguments {
    /// Unconditional parsing: `--workers -1` is a value out of range, not a missing value followed by a flag `-1`.
    @Option(
        name: .customLong("workers"), parsing: .unconditional,
        help: "Number of worker processes (\(Self.sizeRange.lowerBound)...\(Self.sizeRange.upperBound)).")
    var size: Int = Defaults.pool.size

    /// The sizes `--workers` takes (`concierge scale` and `--autoscale` go up to the same limit).
    static let sizeRange = 1...1024

    @Option(
        help: ArgumentHelp(
            "Control endpoint for resizing a running pool (`concierge scale`). Default: ipc://DIR/pool-<pid>.ctl "
                + "in this user's DIR ($\(PoolControlDirectory.environmentVariable), else $XDG_RUNTIME_DIR/concierge, "
                + "else /tmp/concierge-<uid>), where `concierge scale` finds it.",
            valueName: "endpoint"))
    var control: String?

    /// `--control`, else this process's endpoint in the user's control directory (created when missing).
    func controlEndpoint() throws -> String {
        if let control { return control }
        do {
            return try PoolControlDirectory.endpointForThisProcess()
        } catch {
            throw ValidationError("\(error)")
        }
    }

    @Option(
        help: ArgumentHelp(
            "Workers are named <prefix>-<slot>. Worker names must be unique per broker: give each host's pool its own "
                + "prefix when several pools serve one broker.",
            valueName: "prefix"))
    var namePrefix: String = "pool"

    @Option(
        help: ArgumentHelp(
            "Scale the pool between MIN and MAX workers on the broker's load (the pool asks its broker: no other "
                + "flag needed); --workers is the starting size, kept within MIN...MAX.",
            valueName: "min:max"))
    var autoscale: String?

    @Option(
        help: ArgumentHelp(
            "With --autoscale: how long a worker's capacity must stay free, with nothing queued, before the pool "
                + "shrinks by one idle worker, in seconds.",
            valueName: "seconds"))
    var autoscaleIdleSeconds: Int = 30

    /// The autoscaling limits, nil without `--autoscale`.
    func autoscaleConfiguration() throws -> AutoscaleConfiguration? {
        guard let autoscale else { return nil }
        let parts = autoscale.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let minimum = Int(parts[0]), let maximum = Int(parts[1]), minimum >= 1,
            minimum <= maximum, maximum <= 1024
        else {
            throw ValidationError(
                "--autoscale takes MIN:MAX with 1 <= MIN <= MAX <= 1024 (at least one worker: the pool learns the "
                    + "intent types it serves from its workers), got `\(autoscale)`")
        }
        guard autoscaleIdleSeconds >= 1 else { throw ValidationError("--autoscale-idle-seconds takes 1 or more") }
        return AutoscaleConfiguration(
            minimum: minimum, maximum: maximum, idleTime: .seconds(autoscaleIdleSeconds))
    }

    /// The size to start with: `--workers`, within the autoscaling limits.
    func startingSize() throws -> Int {
        guard let limits = try autoscaleConfiguration() else { return size }
        return min(max(size, limits.minimum), limits.maximum)
    }

    func validate() throws {
        guard Self.sizeRange.contains(size) else {
            throw ValidationError(
                "--workers \(size) is out of range: it takes \(Self.sizeRange.lowerBound)...\(Self.sizeRange.upperBound)"
            )
        }
        _ = try autoscaleConfiguration()
    }
}

struct PoolCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool",
        abstract: "Run and supervise N worker processes (restarts crashed ones; resize with `concierge scale`).",
        discussion: """
            By default the pool runs `concierge worker` (the example handlers). Give --executable (and arguments \
            after --) to supervise any worker program; each gets CONCIERGE_WORKER_NAME=pool-<slot>, \
            CONCIERGE_BROKER (--broker) and, with CURVE, CONCIERGE_CURVE_SERVER_KEY and CONCIERGE_CURVE_SECRET_KEY \
            (absolute paths): a worker built on ConciergeCommandLine's WorkerMain takes them as its --name, \
            --broker and CURVE keys.
            """
    )

    @Option(
        help: """
            The broker's backend endpoint, or several separated by commas (passed to every worker: as --broker to \
            the default one, as CONCIERGE_BROKER to an --executable).
            """)
    var broker: String = Defaults.worker.brokerEndpoint

    @OptionGroup var pool: PoolOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var curve: CurveClientOptions
    @OptionGroup var heartbeat: HeartbeatOption
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var http: HTTPOptions

    @Option(help: "Worker executable to supervise instead of `concierge worker`.")
    var executable: String?

    @Argument(parsing: .postTerminator, help: "Arguments for --executable.")
    var arguments: [String] = []

    func validate() throws {
        _ = try BrokerEndpointList.parse(broker, checkSyntax: true)
    }

    func run() async throws {
        _ = try curve.keys()  // fail now on a bad key file, not in every worker
        let level = logging.bootstrap()
        let logger = Logger(label: "concierge.pool")
        let control = try pool.controlEndpoint()
        var configuration: PoolConfiguration
        if let executable {
            configuration = PoolConfiguration(
                executable: executable, arguments: arguments, size: pool.size, controlEndpoint: control
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
                controlEndpoint: control
            )
        }
        configuration.environment = curve.workerEnvironment
        configuration.environment[WorkerProcessOptions.Environment.broker] = broker
        configuration.size = try pool.startingSize()
        configuration.namePrefix = pool.namePrefix
        let autoscale = try pool.autoscaleConfiguration()
        let endpoint = try http.bindableEndpoint()
        if autoscale != nil || endpoint != nil {
            // The pool asks the broker its workers serve, with their keys (an --executable's own flags are its own:
            // without CURVE options here, the pool asks without CURVE).
            configuration.broker = PoolBrokerLink(
                endpoints: try BrokerEndpointList.parse(broker), curve: try curve.keys(), autoscale: autoscale)
        }
        let service = WorkerPool(configuration: configuration, logger: logger)
        logger.info("concierge pool", metadata: ["workers": "\(configuration.size)", "control": "\(control)"])
        // On SIGTERM services stop in reverse order: the pool first, while /livez still answers.
        var services: [any Service] = []
        if let endpoint {
            let metrics = MetricsRegistry()
            services.append(PoolHTTP.server(endpoint, metrics: metrics, pool: service, logger: logger))
            services.append(PoolMetricsService(pool: service, metrics: metrics, autoscaling: autoscale != nil))
        }
        services.append(service)
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
