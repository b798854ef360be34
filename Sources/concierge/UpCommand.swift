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
        abstract: "Run a broker and a pool of example workers on loopback, ready for `concierge send`."
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
        let brokerService = try Broker(configuration: configuration, logger: Logger(label: "concierge.broker"))
        let command = defaultWorkerCommand
        let autoscale = try pool.autoscaleConfiguration()
        let link =
            autoscale != nil || endpoint != nil
            ? PoolBrokerLink(
                endpoints: [brokerService.backendEndpoint],
                curve: try CurveClientOptions.keys(serverKey: curveServerKey, secretKey: workerSecretKey),
                autoscale: autoscale)
            : nil
        let poolService = WorkerPool(
            configuration: PoolConfiguration(
                executable: command.executable,
                arguments: command.arguments + [
                    "--broker", brokerService.backendEndpoint,
                    "--heartbeat-ms", String(broker.heartbeatMs), "--log-level", level.rawValue, "--log-format",
                    logging.logFormat,
                ] + worker.workerArguments
                    + CurveClientOptions.workerArguments(serverKey: curveServerKey, secretKey: workerSecretKey),
                size: try pool.startingSize(),
                namePrefix: pool.namePrefix,
                controlEndpoint: pool.control,
                broker: link
            ),
            logger: Logger(label: "concierge.pool")
        )
        logger.info(
            "concierge up",
            metadata: [
                "frontend": "\(brokerService.frontendEndpoint)", "workers": "\(pool.size)",
                "control": "\(pool.control)",
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
