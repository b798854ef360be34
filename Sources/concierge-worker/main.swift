// concierge-worker: one worker process with the example handlers, and nothing else — no Foundation, no argument
// parsing library, no broker or pool code — so that each process of a pool stays small in memory. It takes the
// same options as `concierge worker`; `concierge pool` and `concierge up` run it when it sits next to `concierge`.
//
// It is also the model for a handler author's own worker: a provider, a `Worker`, a `ServiceGroup`.
import ConciergeExamples
import IntentWorker
import Logging
import ServiceLifecycle
import UnixSignals
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    usage: concierge-worker [--broker ENDPOINT] [--name NAME] [--capacity N] [--heartbeat-ms MS]
                            [--jobs-on thread|pool] [--log-level LEVEL]
                            [--curve-server-key FILE --curve-secret-key FILE]
    Runs one worker with the example handlers (RequestRide, StartWorkout, SendMessage, SendPayment, Echo).
    Defaults: --broker tcp://127.0.0.1:5556, --name $CONCIERGE_WORKER_NAME or worker-<pid>, --capacity 16,
    --heartbeat-ms 1000, --jobs-on thread, --log-level info, no CURVE. CURVE: the broker's public key file and
    this worker's secret key file (its public key must be on the broker's worker allowlist).
    """

func fail(_ message: String) -> Never {
    let text = "concierge-worker: \(message)\n\(usage)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    if flag == "--help" || flag == "-h" {
        print(usage)
        exit(0)
    }
    let known = [
        "--broker", "--name", "--capacity", "--heartbeat-ms", "--jobs-on", "--log-level", "--curve-server-key",
        "--curve-secret-key",
    ]
    guard known.contains(flag) else { fail("unknown option \(flag)") }
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
    options[flag] = value
}

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

guard let capacity = Int(options["--capacity"] ?? "16"), (1...1000).contains(capacity) else {
    fail("--capacity takes 1 to 1000")
}
guard let heartbeat = Int(options["--heartbeat-ms"] ?? "1000"), heartbeat > 0 else {
    fail("--heartbeat-ms takes a positive number")
}
guard let execution = WorkerConfiguration.JobExecution(rawValue: options["--jobs-on"] ?? "thread") else {
    fail("--jobs-on takes thread or pool")
}
guard let level = Logger.Level(rawValue: options["--log-level"] ?? "info") else {
    fail("--log-level takes trace, debug, info, notice, warning, error or critical")
}

var curve: CurveClientKeys?
switch (options["--curve-server-key"], options["--curve-secret-key"]) {
case (nil, nil):
    break
case (let serverKey?, let secretKey?):
    do {
        curve = try CurveClientKeys(serverKeyFile: serverKey, secretKeyFile: secretKey)
    } catch {
        fail("\(error)")
    }
default:
    fail("CURVE needs both --curve-server-key and --curve-secret-key")
}

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
let logger = Logger(label: "concierge.worker")
let configuration = WorkerConfiguration(
    brokerEndpoint: options["--broker"] ?? "tcp://127.0.0.1:5556",
    name: options["--name"] ?? environment("CONCIERGE_WORKER_NAME"),
    capacity: capacity,
    heartbeatInterval: .milliseconds(heartbeat),
    jobExecution: execution,
    curve: curve
)
let worker = Worker(configuration: configuration, provider: Examples.provider, logger: logger)
var watchEnvironment: [String: String] = [:]
watchEnvironment["CONCIERGE_POOL_PID"] = environment("CONCIERGE_POOL_PID")
let group = ServiceGroup(
    configuration: .init(
        services: [
            .init(service: worker),
            .init(
                service: ParentWatch(environment: watchEnvironment, logger: logger),
                successTerminationBehavior: .gracefullyShutdownGroup
            ),
        ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
)
do {
    try await group.run()
} catch {
    logger.critical("worker failed", metadata: ["error": "\(error)"])
    exit(1)
}
