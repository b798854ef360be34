import ArgumentParser
import ConciergeExamples
import Foundation
import IntentWorker
import Logging
import ServiceLifecycle
import UnixSignals

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run one worker process with the example handlers."
    )

    @Option(help: "The broker's backend endpoint.")
    var broker: String = Defaults.worker.brokerEndpoint

    @Option(help: "Worker name (its routing id). Default: $CONCIERGE_WORKER_NAME, else worker-<pid>.")
    var name: String?

    @OptionGroup var worker: WorkerOptions
    @OptionGroup var curve: CurveClientOptions
    @OptionGroup var heartbeat: HeartbeatOption
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard WorkerConfiguration.JobExecution(rawValue: worker.jobsOn) != nil else {
            throw ValidationError("--jobs-on takes `thread` or `pool`")
        }
    }

    func run() async throws {
        let execution = WorkerConfiguration.JobExecution(rawValue: worker.jobsOn) ?? .workerThread
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.worker")
        let configuration = WorkerConfiguration(
            brokerEndpoint: broker,
            name: name ?? ProcessInfo.processInfo.environment["CONCIERGE_WORKER_NAME"],
            capacity: worker.capacity,
            heartbeatInterval: .milliseconds(heartbeat.heartbeatMs),
            jobExecution: execution,
            curve: try curve.keys()
        )
        let service = Worker(configuration: configuration, provider: Examples.provider, logger: logger)
        let watch = ParentWatch(environment: ProcessInfo.processInfo.environment, logger: logger)
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
}
