import ArgumentParser
import IntentBroker
import IntentPool
import Logging
import ServiceLifecycle
import UnixSignals

struct Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run a broker and a pool of example workers on loopback, ready for `concierge send`."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var pool: PoolOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let level = logging.bootstrap()
        let logger = Logger(label: "concierge")
        let brokerService = try Broker(configuration: broker.configuration, logger: Logger(label: "concierge.broker"))
        let command = defaultWorkerCommand
        let poolService = WorkerPool(
            configuration: PoolConfiguration(
                executable: command.executable,
                arguments: command.arguments + [
                    "--broker", brokerService.backendEndpoint,
                    "--heartbeat-ms", String(broker.heartbeatMs), "--log-level", level.rawValue,
                ] + worker.workerArguments,
                size: pool.size,
                controlEndpoint: pool.control
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
        // The pool stops first (workers drain while the broker still answers), then the broker.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: brokerService),
                    .init(service: poolService),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
