import ArgumentParser
import IntentBroker
import Logging
import ServiceLifecycle
import UnixSignals

struct BrokerOptions: ParsableArguments {
    @Option(help: "Endpoint clients connect to.")
    var frontend: String = Defaults.frontend

    @Option(help: "Endpoint workers connect to.")
    var backend: String = Defaults.backend

    @Option(help: "Default first-reply deadline in milliseconds.")
    var deadlineMs: Int = 3000

    @Option(help: "Hard limit per request in milliseconds (then error `timeout`).")
    var hardLimitMs: Int = 60_000

    @Option(
        help: "Act on a deadline up to this many ms early (a tenth of the deadline at most) so replies arrive in time.")
    var replyMarginMs: Int = 50

    @Option(help: "Heartbeat interval in milliseconds.")
    var heartbeatMs: Int = 1000

    @Option(help: "Most finished results kept for STATUS queries.")
    var maxResults: Int = 100_000

    @Option(help: "Most requests waiting for a worker (all intent types); past it, error `busy`.")
    var maxQueued: Int = 100_000

    @Option(help: "Largest request body in bytes.")
    var maxBody: Int = 1 << 20

    @Option(help: "How long finished results stay available to STATUS, in seconds.")
    var resultTtl: Int = 60

    var configuration: BrokerConfiguration {
        BrokerConfiguration(
            frontendEndpoint: frontend,
            backendEndpoint: backend,
            defaultDeadline: .milliseconds(deadlineMs),
            hardLimit: .milliseconds(hardLimitMs),
            maxReplyMargin: .milliseconds(replyMarginMs),
            heartbeatInterval: .milliseconds(heartbeatMs),
            resultTTL: .seconds(resultTtl),
            maxStoredResults: maxResults,
            maxBodySize: maxBody,
            maxQueuedRequests: maxQueued
        )
    }
}

struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the broker: clients on the frontend, workers on the backend."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var security: BrokerSecurityOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.broker")
        var configuration = broker.configuration
        try security.apply(to: &configuration)
        let service = try Broker(configuration: configuration, logger: logger)
        let group = ServiceGroup(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        try await group.run()
    }
}
