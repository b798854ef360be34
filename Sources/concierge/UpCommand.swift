import ArgumentParser
import ConciergeCommandLine
import ConciergeGateway
import ConciergeHTTP
import ConciergeTracing
import IntentBroker
import IntentPool
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals
import ZeroMQ

struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run a broker and a pool of workers on loopback, ready for `concierge send`.",
        discussion: """
            By default the pool runs the example workers (`concierge worker`). Give --executable (and arguments \
            after --) to run your own worker program instead, as `concierge pool --executable` does: each gets \
            CONCIERGE_WORKER_NAME=<prefix>-<slot>, CONCIERGE_BROKER (this broker's backend) and, with CURVE, \
            CONCIERGE_CURVE_SERVER_KEY and CONCIERGE_CURVE_SECRET_KEY (--curve-server-key, --worker-secret-key): \
            a worker built on ConciergeCommandLine's WorkerMain takes them as its --name, --broker and CURVE keys. \
            The worker options (--capacity, --jobs-on, --tracing, ...) go to the example workers only.
            """
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var security: BrokerSecurityOptions
    @OptionGroup var pool: PoolOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var http: HTTPOptions

    @Option(
        help: ArgumentHelp(
            "CURVE: the broker's public key file, for the pool's workers (must match --curve-secret-key).",
            valueName: "file"
        )
    )
    var curveServerKey: String?

    @Option(
        help: ArgumentHelp(
            "CURVE: the secret key file of the pool's workers (its public key must be on --worker-keys).",
            valueName: "file"
        )
    )
    var workerSecretKey: String?

    @Flag(help: "Also serve the HTTP/JSON gateway (Docs/GATEWAY.md) on --gateway-listen.")
    var gateway = false

    @Option(help: ArgumentHelp("With --gateway, where it listens (loopback only).", valueName: "host:port"))
    var gatewayListen: String = "127.0.0.1:8080"

    @Option(
        help: ArgumentHelp(
            "Worker executable the pool runs instead of the example workers (e.g. .build/debug/pizza-worker).",
            valueName: "path"))
    var executable: String?

    @Argument(parsing: .postTerminator, help: "Arguments for --executable.")
    var arguments: [String] = []

    func validate() throws {
        if gateway {
            guard security.curveSecretKey == nil else {
                throw ValidationError("--gateway runs without CURVE: with CURVE, run `concierge gateway` with its keys")
            }
            guard let endpoint = try? HTTPEndpoint(parsing: gatewayListen), endpoint.isLoopback else {
                throw ValidationError("--gateway-listen takes a loopback HOST:PORT (for more, run `concierge gateway`)")
            }
        }
        let workerKeysGiven = curveServerKey != nil && workerSecretKey != nil
        if security.curveSecretKey != nil && !workerKeysGiven {
            throw ValidationError(
                "with CURVE, `up` also needs --curve-server-key and --worker-secret-key for its workers")
        }
        if security.curveSecretKey == nil && (curveServerKey != nil || workerSecretKey != nil) {
            throw ValidationError("--curve-server-key and --worker-secret-key need the broker's CURVE options")
        }
        if executable == nil && !arguments.isEmpty {
            throw ValidationError("arguments after -- are for --executable: give --executable PATH")
        }
    }

    func run() async throws {
        let level = logging.bootstrap()
        let logger = Logger(label: "concierge")
        // `--tracing` (a worker option) traces the broker and the pool's workers alike.
        let exporter = try TracingBootstrap.bootstrap(
            TracingConfiguration(enabled: worker.tracing, serviceName: "concierge-broker"), logger: logger)
        var configuration = broker.configuration
        configuration.tracing = worker.tracing
        try security.apply(to: &configuration)
        if let curve = configuration.curve,
            let keys = try CurveClientOptions.keys(serverKey: curveServerKey, secretKey: workerSecretKey)
        {
            guard try curve.secretKey.publicKey() == keys.serverKey else {
                throw ValidationError("--curve-server-key is not the public key of the broker's --curve-secret-key")
            }
            guard curve.workerKeys.contains(keys.keyPair.publicKey) else {
                throw ValidationError("the public key of --worker-secret-key is not on --worker-keys")
            }
        }
        let endpoint = try http.bindableEndpoint()
        // One registry and one server for the broker's metrics and the pool's.
        let metrics = endpoint.map { _ in
            MetricsRegistry(deadline: configuration.defaultDeadline, hardLimit: configuration.hardLimit)
        }
        configuration.metricsFactory = metrics?.factory
        let control = try pool.controlEndpoint()
        let brokerService = try Broker(configuration: configuration, logger: Logger(label: "concierge.broker"))
        let autoscale = try pool.autoscaleConfiguration()
        let link =
            autoscale != nil || endpoint != nil
            ? PoolBrokerLink(
                endpoints: [brokerService.backendEndpoint],
                curve: try CurveClientOptions.keys(serverKey: curveServerKey, secretKey: workerSecretKey),
                autoscale: autoscale)
            : nil
        var poolConfiguration: PoolConfiguration
        if let executable {
            // Your own worker: its flags are its own (after --); the broker and the CURVE keys reach it through its
            // environment, as under `concierge pool --executable`.
            poolConfiguration = PoolConfiguration(executable: executable, arguments: arguments)
            var curve = CurveClientOptions()
            curve.curveServerKey = curveServerKey
            curve.curveSecretKey = workerSecretKey
            poolConfiguration.environment = curve.workerEnvironment
            poolConfiguration.environment[WorkerProcessOptions.Environment.broker] = brokerService.backendEndpoint
            if broker.heartbeatMs != Defaults.broker.heartbeatInterval.wholeMilliseconds,
                !arguments.contains(where: { $0.hasPrefix("--heartbeat-ms") })
            {
                // Both sides must heartbeat at the same interval (PROTOCOL.md section 7), and only the example
                // workers are given the broker's.
                logger.warning(
                    "--heartbeat-ms is not passed to an --executable: give it after -- too",
                    metadata: ["heartbeat-ms": "\(broker.heartbeatMs)"])
            }
        } else {
            let command = defaultWorkerCommand
            poolConfiguration = PoolConfiguration(
                executable: command.executable,
                arguments: command.arguments + [
                    "--broker", brokerService.backendEndpoint,
                    "--heartbeat-ms", String(broker.heartbeatMs), "--log-level", level.rawValue, "--log-format",
                    logging.logFormat,
                ] + worker.workerArguments
                    + CurveClientOptions.workerArguments(serverKey: curveServerKey, secretKey: workerSecretKey))
        }
        poolConfiguration.size = try pool.startingSize()
        poolConfiguration.namePrefix = pool.namePrefix
        poolConfiguration.controlEndpoint = control
        poolConfiguration.broker = link
        let poolService = WorkerPool(configuration: poolConfiguration, logger: Logger(label: "concierge.pool"))
        logger.info(
            "concierge up",
            metadata: [
                "frontend": "\(brokerService.frontendEndpoint)", "workers": "\(pool.size)",
                "control": "\(control)", "executable": "\(poolConfiguration.executable)",
            ]
        )
        // The gateway stops first (its streams end while workers still run), then the pool (workers drain while the
        // broker still answers), then the broker, then /livez, then the span exporter (it sends the last spans).
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = exporter.map { [.init(service: $0)] } ?? []
        if let endpoint, let metrics {
            let health = brokerService.health
            let server = ObservabilityServer(
                endpoint: endpoint, registry: metrics.registry, logger: logger,
                live: { PoolHTTP.both(HealthStatus(health.liveness()), PoolHTTP.liveness(poolService)) },
                ready: { PoolHTTP.both(HealthStatus(health.readiness()), PoolHTTP.readiness(poolService)) })
            services.append(.init(service: server))
        }
        services.append(.init(service: brokerService))
        if let path = security.permissions {
            services.append(.init(service: PermissionsReloader(path: path, broker: brokerService, logger: logger)))
        }
        if let metrics {
            services.append(
                .init(service: PoolMetricsService(pool: poolService, metrics: metrics, autoscaling: autoscale != nil)))
        }
        services.append(.init(service: poolService))
        if gateway {
            let listen = try HTTPEndpoint(parsing: gatewayListen)
            try listen.checkBindable()
            let registry = metrics?.registry
            services.append(
                .init(
                    service: try Gateway(
                        configuration: GatewayConfiguration(
                            brokerEndpoints: [brokerService.frontendEndpoint], listen: listen,
                            heartbeatInterval: .milliseconds(broker.heartbeatMs), tracing: worker.tracing),
                        logger: Logger(label: "concierge.gateway"), metricsFactory: metrics?.factory,
                        metricsText: { registry?.emitToBuffer() ?? [] })))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
