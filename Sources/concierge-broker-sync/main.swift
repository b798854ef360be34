// A broker with default settings on the main thread, without Swift concurrency: for valgrind's callgrind, which
// cannot run a program whose main thread parks in `dispatchMain()` (as `concierge broker`'s async main does).
// `Scripts/profile` runs it under callgrind; SIGTERM or SIGINT stops it gracefully, so callgrind writes its profile.
//
//     concierge-broker-sync FRONTEND BACKEND
import Glibc
import IntentBroker
import Logging

nonisolated(unsafe) var running: Broker?

func fail(_ message: String, status: Int32) -> Never {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    fail("usage: concierge-broker-sync FRONTEND BACKEND", status: 64)
}
var logger = Logger(label: "concierge.broker")
logger.logLevel = .error
do {
    let broker = try Broker(
        configuration: BrokerConfiguration(frontendEndpoint: arguments[1], backendEndpoint: arguments[2]),
        logger: logger)
    running = broker
    // Only an atomic store and an eventfd write: safe in a signal handler.
    signal(SIGTERM) { _ in running?.stop() }
    signal(SIGINT) { _ in running?.stop() }
    try broker.runOnThisThread()
} catch {
    fail("concierge-broker-sync: \(error)", status: 1)
}
